//! Raw FFI to the OpenZiti C SDK. Placeholder until the SDK is wired in.
