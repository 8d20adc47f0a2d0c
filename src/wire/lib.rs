//! The wire: the transports (system, proxy, the Ziti SDK), HTTP over them, and the clients of
//! tenancy, OpenBao and the image registries. It knows nothing of the tick.

pub mod bao;
pub mod egress;
pub mod http;
pub mod registry;
pub mod tenancy;
pub mod transport;
