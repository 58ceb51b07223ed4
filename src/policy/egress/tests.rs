use core::net::IpAddr;

use super::dns::{self, Outcome, Placeholders};
use super::sniff::{self, First, ProxyRequest};
use super::*;

fn policy(allow: &[&str], deny: &[&str]) -> Matcher {
    Matcher::new(&NetworkPolicy::new(allow, deny).unwrap())
}

fn name(n: &str) -> Dest {
    Dest::Name(n.into())
}

fn addr(a: &str) -> Dest {
    Dest::Addr(a.parse().unwrap())
}

fn allowed(v: Verdict) -> bool {
    matches!(v, Verdict::Allow { .. })
}

#[test]
fn config_forms() {
    let off: Network = serde_json::from_str("false").unwrap();
    assert_eq!(off, Network::Off);
    let any: Network = serde_json::from_str("true").unwrap();
    assert_eq!(any, Network::any());
    let listed: Network = serde_json::from_value(serde_json::json!({
        "allow": ["api.github.com", "*.githubusercontent.com", "registry.npmjs.org:443",
                  "127.0.0.1:5432", "10.0.0.0/8", "[::1]:8080", "fd00::/8", "@pypi"],
        "deny": ["evil.example"]
    }))
    .unwrap();
    let p = listed.policy().unwrap();
    assert_eq!(p.allow.len(), 8);
    // Round trip through JSON keeps every entry as written.
    let back: Network = serde_json::from_value(serde_json::to_value(&listed).unwrap()).unwrap();
    assert_eq!(back, listed);
    assert_eq!(serde_json::to_value(Network::any()).unwrap(), serde_json::json!(true));
    for bad in [
        r#"{"allow": ["exa mple.com"]}"#,
        r#"{"allow": ["a.com:0"]}"#,
        r#"{"allow": ["a.com:99999"]}"#,
        r#"{"allow": ["10.0.0.0/33"]}"#,
        r#"{"allow": ["@nosuch"]}"#,
        r#"{"allow": ["[::1"]}"#,
        r#"{"alow": []}"#,
        r#""yes""#,
    ] {
        let e = serde_json::from_str::<Network>(bad).unwrap_err().to_string();
        assert!(!e.is_empty(), "{bad}");
    }
    let e = serde_json::from_str::<Network>(r#"{"allow": ["@nosuch"]}"#).unwrap_err().to_string();
    assert!(e.contains("@npm"), "the error lists the presets: {e}");
}

#[test]
fn names_match_exactly_or_as_subdomains() {
    let m = policy(&["api.github.com", "*.githubusercontent.com", "registry.npmjs.org:443"], &[]);
    assert!(allowed(m.judge(&name("api.github.com"), 443)));
    assert!(allowed(m.judge(&name("API.GitHub.com."), 80)), "case and the root dot do not matter");
    assert!(!allowed(m.judge(&name("api.github.com"), 8443)), "default ports are 80 and 443");
    assert!(!allowed(m.judge(&name("github.com"), 443)));
    assert!(!allowed(m.judge(&name("xapi.github.com"), 443)));
    assert!(allowed(m.judge(&name("raw.githubusercontent.com"), 443)));
    assert!(allowed(m.judge(&name("a.b.githubusercontent.com"), 443)));
    assert_eq!(
        m.judge(&name("githubusercontent.com"), 443),
        Verdict::Refuse(Refusal::NotListed),
        "*.x is not x"
    );
    assert!(!allowed(m.judge(&name("evilgithubusercontent.com"), 443)));
    assert!(allowed(m.judge(&name("registry.npmjs.org"), 443)));
    assert!(!allowed(m.judge(&name("registry.npmjs.org"), 80)), "an explicit port is the only one");
    assert_eq!(m.judge(&name("bad name"), 443), Verdict::Refuse(Refusal::BadName));
    assert_eq!(m.ports(), [80, 443].into_iter().collect());
}

#[test]
fn deny_wins() {
    let m = policy(&["*"], &["*.evil.example", "pastebin.com"]);
    assert!(allowed(m.judge(&name("example.org"), 443)));
    assert_eq!(
        m.judge(&name("x.evil.example"), 443),
        Verdict::Refuse(Refusal::Denied { rule: "*.evil.example".into() })
    );
    assert!(!allowed(m.judge(&name("pastebin.com"), 80)));
    let any_port = policy(&["*:8080", "*"], &["pastebin.com", "x.example:443"]);
    assert!(
        !allowed(any_port.judge(&name("pastebin.com"), 8080)),
        "a deny entry without a port denies every port"
    );
    assert!(allowed(any_port.judge(&name("x.example"), 8080)), "one with a port only that port");
    assert!(m.answers_name("example.org"));
    assert!(!m.answers_name("pastebin.com"));
}

#[test]
fn ip_literals_need_entries_and_blocked_ranges_explicit_ones() {
    let m = policy(&["*", "127.0.0.1:5432", "10.1.0.0/16:443"], &[]);
    assert!(allowed(m.judge(&addr("93.184.216.34"), 443)), "* takes public literals");
    assert!(allowed(m.judge(&addr("127.0.0.1"), 5432)));
    assert!(!allowed(m.judge(&addr("127.0.0.1"), 5433)), "only the listed port");
    assert!(allowed(m.judge(&addr("::ffff:127.0.0.1"), 5432)), "mapped forms are the address");
    assert!(allowed(m.judge(&addr("10.1.2.3"), 443)));
    for blocked in [
        "169.254.169.254",
        "10.0.0.5",
        "172.16.0.1",
        "192.168.1.1",
        "100.64.0.1",
        "127.0.0.2",
        "0.0.0.0",
        "255.255.255.255",
        "224.0.0.1",
        "::1",
        "::",
        "fe80::1",
        "fd00:ec2::254",
        "fc00::1",
        "ff02::1",
        "::ffff:169.254.169.254",
        "::ffff:10.0.0.5",
        "64:ff9b::a9fe:a9fe",
        "2002:a9fe:a9fe::1",
        "2002:0a00:0005::",
        "::10.0.0.5",
        "198.18.0.7",
        "2001:db8::1",
        "::ffff:0:a9fe:a9fe",
        "3fff::1",
    ] {
        let v = m.judge(&addr(blocked), 443);
        assert!(matches!(v, Verdict::Refuse(Refusal::Blocked { .. })), "{blocked}: {v:?}");
    }
    let strict = policy(&["api.github.com"], &[]);
    assert_eq!(strict.judge(&addr("93.184.216.34"), 443), Verdict::Refuse(Refusal::NotListed));
    let d = policy(&["*"], &["93.184.216.0/24"]);
    assert!(matches!(
        d.judge(&addr("93.184.216.34"), 443),
        Verdict::Refuse(Refusal::Denied { .. })
    ));
}

#[test]
fn resolved_addresses_refuse_rebinding() {
    let m = policy(&["api.example.com", "db.example.com:5432", "127.0.0.1:5432"], &["203.0.0.0/8"]);
    let ips = |v: &[&str]| v.iter().map(|s| s.parse::<IpAddr>().unwrap()).collect::<Vec<_>>();
    assert_eq!(m.judge_resolved(443, &ips(&["93.184.216.34", "2606:2800::1"])), None);
    let r = m.judge_resolved(443, &ips(&["93.184.216.34", "169.254.169.254"]));
    assert!(matches!(r, Some(Refusal::Blocked { range: Range::Metadata, .. })), "{r:?}");
    let r = m.judge_resolved(443, &ips(&["10.0.0.5"]));
    assert!(matches!(r, Some(Refusal::Blocked { range: Range::Private, .. })));
    let r = m.judge_resolved(443, &ips(&["127.0.0.1"]));
    assert!(
        matches!(r, Some(Refusal::Blocked { range: Range::Loopback, .. })),
        "port 443 is not listed for it"
    );
    assert_eq!(m.judge_resolved(5432, &ips(&["127.0.0.1"])), None, "the explicit entry opens it");
    assert!(matches!(m.judge_resolved(443, &ips(&["203.1.2.3"])), Some(Refusal::Denied { .. })));
    assert!(matches!(m.judge_resolved(443, &[]), Some(Refusal::Unresolved { .. })));
    let text = m.judge_resolved(443, &ips(&["169.254.169.254"])).unwrap().to_string();
    assert!(text.contains("169.254.169.254 is a cloud metadata address"), "{text}");
}

#[test]
fn entries_print_as_written() {
    for e in ["*", "*.x.com:8443", "a.b", "10.0.0.0/8", "127.0.0.1:5432", "[::1]:80", "fd00::/8"] {
        assert_eq!(e.parse::<Entry>().unwrap().to_string(), e);
    }
    assert_eq!("10.1.2.3/8".parse::<Entry>().unwrap().to_string(), "10.0.0.0/8");
    // Found by the fuzzer: an address with a root dot is an address, not a name that never
    // matches (a deny entry written so must deny).
    assert_eq!("10.0.0.7.".parse::<Entry>().unwrap().to_string(), "10.0.0.7");
    let d = policy(&["*", "10.0.0.0/8"], &["10.0.0.7."]);
    assert!(!allowed(d.judge(&addr("10.0.0.7"), 443)));
    let p = NetworkPolicy::new(["@npm", "@pypi"], [] as [&str; 0]).unwrap();
    assert_eq!(p.allow.len(), 3, "presets expand to their hosts");
}

#[test]
fn dns_stub_answers_from_the_policy_and_never_more() {
    let m = policy(&["api.github.com", "*.npmjs.org"], &[]);
    let mut places = Placeholders::default();
    let ask = |places: &mut Placeholders, n: &str, t: u16| {
        dns::answer(&dns::query(7, n, t), |n| m.answers_name(n), places).unwrap()
    };
    let a = ask(&mut places, "API.github.com", 1);
    let Outcome::Placeholder(ip) = a.outcome else { panic!("{a:?}") };
    assert_eq!(a.name.as_deref(), Some("api.github.com"));
    assert_eq!(&a.bytes[..2], &7u16.to_be_bytes(), "the id is echoed");
    assert_eq!(a.bytes[3] & 0x0f, 0);
    assert_eq!(&a.bytes[a.bytes.len() - 4..], &ip.octets());
    assert_eq!(places.name_of(IpAddr::V4(ip)), Some("api.github.com"));
    assert_eq!(ask(&mut places, "api.github.com", 1).outcome, Outcome::Placeholder(ip), "stable");
    assert!(super::blocked(IpAddr::V4(ip)).is_some(), "placeholders are in a blocked range");
    let b = ask(&mut places, "registry.npmjs.org", 1);
    assert!(matches!(b.outcome, Outcome::Placeholder(other) if other != ip));
    assert_eq!(ask(&mut places, "api.github.com", 28).outcome, Outcome::NoData);
    let nx = ask(&mut places, "secret-token.evil.example", 1);
    assert_eq!((nx.outcome, nx.bytes[3] & 0x0f), (Outcome::NxDomain, 3));
    let mut weird = dns::query(9, "a.b", 1);
    weird[13] = b'*';
    let r = dns::answer(&weird, |_| true, &mut places).unwrap();
    assert_eq!((r.outcome, r.bytes[3] & 0x0f), (Outcome::Refused, 5));
    assert!(dns::answer(&[0; 5], |_| true, &mut places).is_none());
    let mut response = dns::query(1, "a.b", 1);
    response[2] |= 0x80;
    assert!(dns::answer(&response, |_| true, &mut places).is_none(), "responses are not answered");
    assert_eq!(places.len(), 2);
    // Bounded: a flood of distinct allowed names ends in SERVFAIL, not in unbounded memory.
    let mut full = Placeholders::default();
    for i in 0..dns::MAX_NAMES {
        assert!(full.assign(&format!("n{i}.npmjs.org")).is_some());
    }
    assert!(full.assign("one-more.npmjs.org").is_none());
    let over = dns::answer(&dns::query(3, "one-more.npmjs.org", 1), |_| true, &mut full).unwrap();
    assert_eq!((over.outcome, over.bytes[3] & 0x0f), (Outcome::Failed, 2));
}

#[test]
fn sniffing_tls_and_http() {
    assert_eq!(sniff::first(b""), First::NeedMore);
    assert_eq!(sniff::first(b"GET / HTTP/1.1\r\nHost: Example.com:8080\r\n"), First::NeedMore);
    assert_eq!(
        sniff::first(b"GET / HTTP/1.1\r\nHost: Example.com:8080\r\n\r\n"),
        First::Http { host: Some("example.com".into()) }
    );
    assert_eq!(sniff::first(b"\x00\x01binary"), First::Other);
    // Ambiguous heads name no host (the proxy then refuses them on web ports).
    assert_eq!(
        sniff::first(b"GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n"),
        First::Http { host: None }
    );
    assert_eq!(
        sniff::first(b"GET http://evil.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n"),
        First::Http { host: None }
    );
    assert_eq!(
        sniff::first(b"GET http://a.test:80/x HTTP/1.1\r\nHost: a.test\r\n\r\n"),
        First::Http { host: Some("a.test".into()) }
    );
    assert_eq!(sniff::first(b"\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n"), First::Other);
    let hello = client_hello("api.github.com");
    assert_eq!(sniff::first(&hello), First::Tls { sni: Some("api.github.com".into()) });
    for cut in 0..hello.len() {
        assert_eq!(sniff::first(&hello[..cut]), First::NeedMore, "cut at {cut}");
    }
    // The same ClientHello split across two records.
    let body = &hello[5..];
    let mut split = vec![0x16, 3, 1, 0, 10];
    split.extend_from_slice(&body[..10]);
    split.extend_from_slice(&[0x16, 3, 1]);
    split.extend_from_slice(&((body.len() - 10) as u16).to_be_bytes());
    split.extend_from_slice(&body[10..]);
    assert_eq!(sniff::first(&split), First::Tls { sni: Some("api.github.com".into()) });
}

#[test]
fn proxy_requests() {
    assert_eq!(
        sniff::proxy_request(b"CONNECT api.github.com:443 HTTP/1.1\r\nHost: x\r\n\r\nrest"),
        ProxyRequest::Connect { host: "api.github.com".into(), port: 443, head: 48 }
    );
    assert_eq!(
        sniff::proxy_request(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n"),
        ProxyRequest::Connect { host: "::1".into(), port: 8443, head: 31 }
    );
    assert_eq!(
        sniff::proxy_request(b"GET http://Example.com/x?y HTTP/1.1\r\n\r\n"),
        ProxyRequest::Forward { host: "example.com".into(), port: 80 }
    );
    assert_eq!(
        sniff::proxy_request(b"GET http://example.com:8080/ HTTP/1.1\r\n\r\n"),
        ProxyRequest::Forward { host: "example.com".into(), port: 8080 }
    );
    assert_eq!(sniff::proxy_request(b"CONNECT api.github.com HTTP/1.1\r\n\r\n"), ProxyRequest::Bad);
    assert_eq!(sniff::proxy_request(b"GET / HTTP/1.1\r\n\r\n"), ProxyRequest::Bad);
    assert_eq!(sniff::proxy_request(b"CONNECT a:1 HTTP/1.1\r\n"), ProxyRequest::NeedMore);
    let closing = sniff::close_after_answer(
        b"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nProxy-Connection: keep-alive\r\nconnection: keep-alive\r\nAccept: */*\r\n\r\nbody",
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(closing).unwrap(),
        "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nAccept: */*\r\nConnection: close\r\n\r\nbody"
    );
    assert!(sniff::close_after_answer(b"GET http://a.test/ HTTP/1.1\r\n").is_none());
}

/// A minimal TLS 1.2-style ClientHello carrying `sni` (enough for the parser; the sandbox
/// tests send real ones from Node, Python and curl).
pub(crate) fn client_hello(sni: &str) -> Vec<u8> {
    let mut body = vec![3, 3];
    body.extend_from_slice(&[0x11; 32]);
    body.push(0);
    body.extend_from_slice(&[0, 2, 0x13, 0x01]);
    body.extend_from_slice(&[1, 0]);
    let mut sni_ext = Vec::new();
    let n = sni.len() as u16;
    sni_ext.extend_from_slice(&(n + 3).to_be_bytes());
    sni_ext.push(0);
    sni_ext.extend_from_slice(&n.to_be_bytes());
    sni_ext.extend_from_slice(sni.as_bytes());
    let mut exts = vec![0, 0];
    exts.extend_from_slice(&(sni_ext.len() as u16).to_be_bytes());
    exts.extend_from_slice(&sni_ext);
    body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
    body.extend_from_slice(&exts);
    let mut hs = vec![1];
    hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    hs.extend_from_slice(&body);
    let mut rec = vec![0x16, 3, 1];
    rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
    rec.extend_from_slice(&hs);
    rec
}
