//! zenoh secured as a deployment should be: mutual TLS with certificates from a private CA
//! plus user/password authentication, on loopback. An authenticated peer's commands arrive;
//! a client with the CA but no client certificate, or with a certificate but a wrong
//! password, cannot connect, so it cannot publish commands.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use bridge::protocol::{JointCommandMsg, RobotKeys, WireMessage};
use zenoh::{Config, Wait};

#[path = "support/certs.rs"]
mod certs;
use certs::write_certs;

fn config(dir: &Path, json5: &str) -> Config {
    let d = dir.display();
    let text = json5.replace("{d}", &d.to_string());
    Config::from_json5(&text).unwrap()
}

#[test]
fn only_authenticated_mutual_tls_peers_get_commands_through() {
    let dir = tempfile::tempdir().unwrap();
    write_certs(dir.path());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let tls = r#"tls: { root_ca_certificate: "{d}/ca.pem", enable_mtls: true,
        listen_private_key: "{d}/server.key", listen_certificate: "{d}/server.pem",
        connect_private_key: "{d}/client.key", connect_certificate: "{d}/client.pem" }"#;
    let robot = config(
        dir.path(),
        &format!(
            r#"{{ mode: "peer", listen: {{ endpoints: ["tls/localhost:{port}"] }},
            scouting: {{ multicast: {{ enabled: false }}, gossip: {{ enabled: false }} }},
            transport: {{ link: {{ {tls} }},
              auth: {{ usrpwd: {{ user: "robot", password: "robotpw", dictionary_file: "{{d}}/users.txt" }} }} }} }}"#
        ),
    );
    let robot = zenoh::open(robot).wait().unwrap();
    let keys = RobotKeys::new("arm1").unwrap();
    let commands = robot.declare_subscriber(keys.cmd_joints()).wait().unwrap();

    let client = |user: &str, password: &str, with_cert: bool| {
        let tls = if with_cert {
            tls.to_string()
        } else {
            r#"tls: { root_ca_certificate: "{d}/ca.pem" }"#.to_string()
        };
        let mut c = config(
            dir.path(),
            &format!(
                r#"{{ mode: "client", connect: {{ endpoints: ["tls/localhost:{port}"], timeout_ms: 3000 }},
                scouting: {{ multicast: {{ enabled: false }}, gossip: {{ enabled: false }} }},
                transport: {{ link: {{ {tls} }},
                  auth: {{ usrpwd: {{ user: "{user}", password: "{password}" }} }} }} }}"#
            ),
        );
        c.insert_json5("connect/exit_on_failure", "true").unwrap();
        zenoh::open(c).wait()
    };
    let send = |session: &zenoh::Session| {
        let cmd = JointCommandMsg {
            seq: 1,
            stamp_ns: 1,
            task_seq: 0,
            q_rad: vec![0.0; 6],
            gripper_opening: 1.0,
        };
        for _ in 0..20 {
            session.put(keys.cmd_joints(), cmd.encode()).wait().unwrap();
            std::thread::sleep(Duration::from_millis(50));
        }
    };

    // No client certificate: the TLS handshake fails, no session.
    assert!(
        client("operator", "s3cret", false).is_err(),
        "connected without a client certificate"
    );
    // Certificate but the wrong password: authentication fails, no session.
    assert!(
        client("operator", "wrong", true).is_err(),
        "connected with a wrong password"
    );
    while commands.try_recv().unwrap().is_some() {}

    let operator = client("operator", "s3cret", true).expect("authenticated client");
    send(&operator);
    let got = commands.recv_timeout(Duration::from_secs(5)).unwrap();
    let got = got.expect("the authenticated client's command did not arrive");
    assert_eq!(
        JointCommandMsg::decode(&got.payload().to_bytes())
            .unwrap()
            .q_rad
            .len(),
        6
    );
}
