//! Unit tests of the web config reader and the basic-auth check.

use super::*;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("brr-webconfig-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn problem(text: &str, scope: AuthScope) -> String {
    let d = tmpdir("bad");
    let p = write(&d, "web.yml", text);
    match load(&p, scope) {
        Err(BrrError::Usage(line)) => {
            assert!(
                line.starts_with(&format!("brr: {}: ", p.display())),
                "{line}"
            );
            assert!(!line.contains('\n'), "{line}");
            line
        }
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("accepted {text:?}"),
    }
}

fn basic(user: &str, password: &str) -> String {
    let raw = format!("{user}:{password}");
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(raw)
    )
}

#[test]
fn bad_files_name_the_problem() {
    assert!(problem("nonsense: 1\n", AuthScope::Everything).contains("unknown field `nonsense`"));
    assert!(problem("basic_auth_users: [\n", AuthScope::Everything).contains("web.yml"));
    assert!(
        problem("basic_auth_users:\n  alice: plain\n", AuthScope::Everything)
            .contains("is not bcrypt")
    );
    assert!(problem(
        "tls_server_config:\n  cert_file: c.pem\n",
        AuthScope::Everything
    )
    .contains("needs both cert_file and key_file"));
    assert!(problem(
        "tls_server_config:\n  cert_file: none.pem\n  key_file: none.key\n",
        AuthScope::Everything
    )
    .contains("cert_file"));
    assert!(problem(
        "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS10\n",
        AuthScope::Everything
    )
    .contains("TLS 1.2 and 1.3"));
    assert!(problem(
        "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n",
        AuthScope::Everything
    )
    .contains("no client_ca_file"));
    assert!(problem(
        "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAnyClientCert\n",
        AuthScope::Everything
    )
    .contains("nobody verified"));
    assert!(problem(
        "http_server_config:\n  headers:\n    Content-Type: x\n",
        AuthScope::Everything
    )
    .contains("written by brr"));
    assert!(problem("", AuthScope::ProfilesOnly).contains("needs basic_auth_users"));
    let missing = Path::new("/nonexistent/web.yml");
    assert!(
        matches!(load(missing, AuthScope::Everything), Err(BrrError::Usage(l)) if l.contains("cannot read it"))
    );
}

#[test]
fn an_empty_file_or_headers_only_serves_plain_and_open() {
    let d = tmpdir("empty");
    let w = load(&write(&d, "web.yml", ""), AuthScope::Everything).unwrap();
    assert!(w.tls.is_none() && w.extra_headers.is_empty());
    let w = load(
        &write(
            &d,
            "h.yml",
            "http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: deny\n",
        ),
        AuthScope::Everything,
    )
    .unwrap();
    assert_eq!(w.extra_headers, "X-Frame-Options: deny\r\n");
    let req = HttpRequest {
        path: "/metrics".into(),
        ..HttpRequest::default()
    };
    assert!(w.door.refuse(&req).is_none());
}

#[test]
fn basic_auth_checks_and_remembers() {
    let hash = bcrypt::hash_with_salt(b"s3cret", 4, [7u8; 16])
        .unwrap()
        .to_string();
    let users = BTreeMap::from([("alice".to_string(), hash)]);
    let door = Door::new(users.clone(), AuthScope::Everything).unwrap();
    let mut req = HttpRequest {
        path: "/metrics".into(),
        ..HttpRequest::default()
    };
    let refused = door.refuse(&req).unwrap();
    assert_eq!(refused.status, 401);
    assert!(refused
        .headers
        .contains(&("WWW-Authenticate", "Basic realm=\"brr\"".to_string())));
    for wrong in [
        basic("alice", "wrong"),
        basic("bob", "s3cret"),
        basic("alice", ""),
        "Bearer x".to_string(),
        "Basic !!!".to_string(),
    ] {
        req.authorization = Some(wrong.clone());
        assert_eq!(door.refuse(&req).map(|r| r.status), Some(401), "{wrong}");
    }
    assert!(door.verified.lock().unwrap().is_empty());
    req.authorization = Some(basic("alice", "s3cret"));
    assert!(door.refuse(&req).is_none());
    assert!(door.refuse(&req).is_none());
    assert_eq!(door.verified.lock().unwrap().len(), 1);
    // A scheme name in any case, a password holding ':'.
    req.authorization = Some(basic("alice", "s3cret").replace("Basic", "basic"));
    assert!(door.refuse(&req).is_none());
    req.authorization = Some(basic("alice", "s3cret:x"));
    assert!(door.refuse(&req).is_some());
    // Profiles only: /metrics passes without a password.
    let profiles = Door::new(users, AuthScope::ProfilesOnly).unwrap();
    req.authorization = None;
    assert!(profiles.refuse(&req).is_none());
    req.path = crate::serve::profiles::PATH.into();
    assert_eq!(profiles.refuse(&req).map(|r| r.status), Some(401));
}
