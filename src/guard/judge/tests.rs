//! How the guard routes Engine API requests.

use super::*;

#[test]
fn routes() {
    let r = |m: Method, p: &str, q: &str| route(&m, p, q);
    assert_eq!(r(Method::GET, "/v1.43/_ping", ""), Route::Pass);
    assert_eq!(r(Method::HEAD, "/_ping", ""), Route::Pass);
    assert_eq!(
        r(Method::POST, "/v1.41/containers/create", "name=x"),
        Route::CreateContainer
    );
    assert_eq!(
        r(Method::POST, "/v1.41/images/create", "fromImage=a&tag=1"),
        Route::Pull
    );
    assert!(matches!(
        r(Method::POST, "/images/create", "fromSrc=-"),
        Route::Refuse(_)
    ));
    assert!(matches!(
        r(Method::POST, "/v1.41/build", ""),
        Route::Refuse(_)
    ));
    assert_eq!(r(Method::POST, "/v1.43/grpc", ""), Route::Quiet);
    assert!(matches!(
        r(Method::POST, "/containers/abc/exec", ""),
        Route::Refuse(_)
    ));
    assert!(matches!(
        r(Method::POST, "/plugins/pull", ""),
        Route::Refuse(_)
    ));
    assert!(matches!(
        r(Method::POST, "/swarm/init", ""),
        Route::Refuse(_)
    ));
    assert!(matches!(
        r(Method::PUT, "/containers/abc/archive", ""),
        Route::Refuse(_)
    ));
    assert_eq!(
        r(Method::POST, "/v1.43/containers/abc/start", ""),
        Route::Container("abc".into())
    );
    assert_eq!(
        r(Method::DELETE, "/volumes/v", ""),
        Route::DeleteVolume("v".into())
    );
    assert_eq!(
        r(Method::GET, "/v1.43/images/127.0.0.1:5001/x:1/json", ""),
        Route::Pass
    );
}
