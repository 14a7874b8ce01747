//! Test certificates: a private CA, a server and a client certificate signed by it (for
//! `localhost` and 127.0.0.1), and a zenoh user/password dictionary (`operator:s3cret`).
//! Shared by the bridge's TLS test and the farm's (`#[path]` module).

use std::path::Path;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// Writes `ca.pem`, `server.{pem,key}`, `client.{pem,key}` and `users.txt` into `dir`.
pub fn write_certs(dir: &Path) {
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "coevolve test CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate().unwrap();
    std::fs::write(dir.join("ca.pem"), ca.self_signed(&ca_key).unwrap().pem()).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    for name in ["server", "client"] {
        let mut p =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        p.distinguished_name
            .push(DnType::CommonName, format!("coevolve {name}"));
        p.use_authority_key_identifier_extension = true;
        p.key_usages.push(KeyUsagePurpose::DigitalSignature);
        p.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let key = KeyPair::generate().unwrap();
        let cert = p.signed_by(&key, &issuer).unwrap();
        std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).unwrap();
        std::fs::write(dir.join(format!("{name}.key")), key.serialize_pem()).unwrap();
    }
    std::fs::write(dir.join("users.txt"), "operator:s3cret\n").unwrap();
}
