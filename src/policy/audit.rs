//! The audit trail's format, without I/O: canonical JSON, digests, the hash chain and its
//! verification (docs/policy.md, "Audit trail"). The host's writer (`host/audit.rs`) appends
//! the records; `ringmcp audit verify` checks a file with [`verify`].
//!
//! Every record is one line of canonical JSON (keys sorted, no spaces) carrying `seq` (0, 1,
//! 2, … across rotations) and `prev`, the SHA-256 of the previous line's bytes. The first line
//! of a trail is a `genesis` record with a random nonce (so two trails never share a chain) and
//! `prev` all zeros; the first line of a file after a rotation is a `continued` record whose
//! `prev` is the hash of the previous file's last line. Beside the log, a head file (`<log>.head`)
//! holds the last record's `seq` and hash: an edit, insertion, deletion or reordering breaks
//! the chain at the first line affected; a truncation leaves the log shorter than its head.

use serde_json::{Map, Value};

/// `prev` of a genesis record.
pub const ZERO_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// `value` as canonical JSON: object keys sorted (recursively), no insignificant whitespace.
pub fn canonical(value: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), sorted(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    // serde_json's map keeps insertion order only with `preserve_order`; either way the keys
    // were inserted sorted.
    sorted(value).to_string()
}

/// The SHA-256 of `bytes`, as lowercase hex.
pub fn digest_hex(bytes: impl AsRef<[u8]>) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes.as_ref());
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Argument names whose values are never recorded, only digested (whatever the config says).
fn is_secret(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "api_key",
        "authorization",
        "credential",
        "private_key",
        "cookie",
    ]
    .iter()
    .any(|s| n.contains(s))
}

/// `arguments` with the value of every secret-looking member replaced by its digest.
pub fn redact(arguments: &Value) -> Value {
    match arguments {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = if is_secret(k) {
                        Value::String(format!("sha256:{}", digest_hex(canonical(v))))
                    } else {
                        redact(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(redact).collect()),
        other => other.clone(),
    }
}

/// The chain's state: the next `seq` and the hash of the last line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// The `seq` the next record gets.
    pub next_seq: u64,
    /// The SHA-256 of the last line written.
    pub head: String,
}

impl Chain {
    /// Seals `record` (an object, without `seq` and `prev`) as the chain's next line, returned
    /// without its newline; the chain moves on.
    pub fn seal(&mut self, mut record: Map<String, Value>) -> String {
        record.insert("seq".into(), Value::from(self.next_seq));
        record.insert("prev".into(), Value::String(self.head.clone()));
        let line = canonical(&Value::Object(record));
        self.next_seq += 1;
        self.head = digest_hex(&line);
        line
    }

    /// The chain a new trail starts with: its genesis line (`nonce`: random hex) is sealed at
    /// `seq` 0.
    pub fn genesis(nonce: &str, time: &str) -> (Chain, String) {
        let mut chain = Chain { next_seq: 0, head: ZERO_HASH.to_owned() };
        let mut r = Map::new();
        r.insert("type".into(), "genesis".into());
        r.insert("nonce".into(), nonce.into());
        r.insert("time".into(), time.into());
        let line = chain.seal(r);
        (chain, line)
    }

    /// Seals `record` as [`seal`](Self::seal) does, with `sig`: `sign` of the sealed line
    /// without it (a signed checkpoint: it vouches for every line up to it).
    pub fn seal_signed(&mut self, mut record: Map<String, Value>, sign: &dyn Sign) -> String {
        record.insert("seq".into(), Value::from(self.next_seq));
        record.insert("prev".into(), Value::String(self.head.clone()));
        let signature = sign.sign(canonical(&Value::Object(record.clone())).as_bytes());
        record.remove("seq");
        record.remove("prev");
        record.insert("sig".into(), Value::String(hex(&signature)));
        self.seal(record)
    }

    /// The head file's text for this chain, signed when `sign` is given.
    pub fn head_text(&self, sign: Option<&dyn Sign>) -> String {
        let seq = self.next_seq.saturating_sub(1);
        let mut head = serde_json::json!({"seq": seq, "hash": self.head});
        if let Some(sign) = sign {
            head["sig"] = Value::String(hex(&sign.sign(canonical(&head).as_bytes())));
        }
        canonical(&head)
    }
}

/// Signs checkpoints and heads (the host's Ed25519 key; kept outside the log).
pub trait Sign {
    /// The signature of `message`.
    fn sign(&self, message: &[u8]) -> Vec<u8>;
}

impl Sign for ring::signature::Ed25519KeyPair {
    fn sign(&self, message: &[u8]) -> Vec<u8> {
        ring::signature::Ed25519KeyPair::sign(self, message).as_ref().to_vec()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

/// An Ed25519 public key as hex (64 characters), as `ringmcp audit keygen` prints it.
///
/// # Errors
/// When `text` is not 32 bytes of hex.
pub fn public_key_from_hex(text: &str) -> Result<Vec<u8>, String> {
    match unhex(text.trim()) {
        Some(key) if key.len() == 32 => Ok(key),
        _ => Err("an Ed25519 public key is 64 hex characters".into()),
    }
}

/// Whether `value` (a record or head, with its `sig`) is signed by `key` over its canonical
/// form without `sig`.
fn signed_by(value: &Value, key: &[u8]) -> Result<(), String> {
    let sig = value.get("sig").and_then(Value::as_str).ok_or("it is not signed")?;
    let sig = unhex(sig).ok_or("its sig is not hex")?;
    let mut unsigned = value.clone();
    if let Some(m) = unsigned.as_object_mut() {
        m.remove("sig");
    }
    let message = canonical(&unsigned);
    ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, key)
        .verify(message.as_bytes(), &sig)
        .map_err(|_| "its signature does not match the key".to_owned())
}

/// What [`verify`] found in an intact log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Complete records.
    pub records: u64,
    /// The chain after the last complete record.
    pub chain: Chain,
    /// Things worth saying that do not make the log bad (a torn last line, no head file).
    pub warnings: Vec<String>,
}

/// Where and why a log is bad.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct Tampered {
    /// The first bad line (1-based).
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// Checks a log's bytes, and its head file's when there is one. `previous` is the chain of the
/// previous file when this one continues a rotated trail (`None`: not checked across files).
///
/// # Errors
/// The first bad line: a line that is not a record, a `seq` out of order (a deletion,
/// insertion or reordering), a `prev` that is not the previous line's hash (an edit), or a log
/// shorter than its head says (a truncation).
pub fn verify(
    log: &[u8],
    head: Option<&[u8]>,
    previous: Option<&Chain>,
) -> Result<Verified, Tampered> {
    verify_signed(log, head, previous, None)
}

/// [`verify`], and with `key` (an Ed25519 public key) every checkpoint and the head must be
/// signed by it: a missing head, an unsigned one, or a bad signature is a failure.
///
/// # Errors
/// As [`verify`], and the first checkpoint (or the head) not signed by `key`.
pub fn verify_signed(
    log: &[u8],
    head: Option<&[u8]>,
    previous: Option<&Chain>,
    key: Option<&[u8]>,
) -> Result<Verified, Tampered> {
    let mut warnings = Vec::new();
    let mut chain: Option<Chain> = previous.cloned();
    let mut records = 0u64;
    let mut rest = log;
    let mut line_no = 0usize;
    while !rest.is_empty() {
        line_no += 1;
        let (line, more, complete) = match memchr::memchr(b'\n', rest) {
            Some(nl) => (&rest[..nl], &rest[nl + 1..], true),
            None => (rest, &rest[rest.len()..], false),
        };
        rest = more;
        if !complete {
            warnings.push(format!(
                "line {line_no} is a record cut short (a crash mid-write?); the log is verified up to line {}",
                line_no - 1
            ));
            break;
        }
        let bad = |reason: String| Tampered { line: line_no, reason };
        let value: Value =
            serde_json::from_slice(line).map_err(|e| bad(format!("not a JSON record: {e}")))?;
        let text = std::str::from_utf8(line).map_err(|_| bad("not UTF-8".into()))?;
        if canonical(&value) != text {
            return Err(bad("not in canonical form (the record was edited)".into()));
        }
        let seq = value.get("seq").and_then(Value::as_u64).ok_or_else(|| bad("no seq".into()))?;
        let prev =
            value.get("prev").and_then(Value::as_str).ok_or_else(|| bad("no prev".into()))?;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        match &chain {
            None if line_no == 1 && kind == "genesis" => {
                if seq != 0 || prev != ZERO_HASH {
                    return Err(bad("a genesis record must have seq 0 and a zero prev".into()));
                }
            }
            None if line_no == 1 && kind == "continued" => {
                warnings.push(format!(
                    "the log continues a rotated trail at seq {seq}; the previous file was not checked"
                ));
            }
            None => {
                return Err(
                    bad("the log does not start with a genesis or continued record".into()),
                );
            }
            Some(c) => {
                if seq != c.next_seq {
                    return Err(bad(format!(
                        "seq {seq} where {} was expected (a record was removed, inserted or moved)",
                        c.next_seq
                    )));
                }
                if prev != c.head {
                    return Err(bad(
                        "its prev is not the hash of the line before it (a record was edited or replaced)".into(),
                    ));
                }
                if kind == "genesis" {
                    return Err(bad("a second genesis record".into()));
                }
            }
        }
        if let Some(key) = key
            && kind == "checkpoint"
        {
            signed_by(&value, key).map_err(|why| bad(format!("a checkpoint, but {why}")))?;
        }
        let next_seq = seq.checked_add(1).ok_or_else(|| bad("seq out of range".into()))?;
        chain = Some(Chain { next_seq, head: digest_hex(line) });
        records += 1;
    }
    let Some(chain) = chain else {
        return Err(Tampered { line: 1, reason: "the log is empty".into() });
    };
    check_head(head, key, &chain, line_no, &mut warnings)?;
    Ok(Verified { records, chain, warnings })
}

/// Checks the head file against the chain the log ends with (`line_no`: the log's last line):
/// a head past the log is a truncation, one naming another last record an edit; with `key`,
/// it must be there and signed.
fn check_head(
    head: Option<&[u8]>,
    key: Option<&[u8]>,
    chain: &Chain,
    line_no: usize,
    warnings: &mut Vec<String>,
) -> Result<(), Tampered> {
    match head {
        None if key.is_some() => {
            return Err(Tampered {
                line: line_no,
                reason: "no head file, and a signed trail must have its signed head".into(),
            });
        }
        None => warnings.push("no head file: a truncation at the end could not be detected".into()),
        Some(head) => {
            let h: Value = serde_json::from_slice(head).map_err(|e| Tampered {
                line: line_no,
                reason: format!("the head file is unreadable: {e}"),
            })?;
            if let Some(key) = key {
                signed_by(&h, key).map_err(|why| Tampered {
                    line: line_no,
                    reason: format!("the head file names the last record, but {why}"),
                })?;
            }
            let (seq, hash) =
                (h.get("seq").and_then(Value::as_u64), h.get("hash").and_then(Value::as_str));
            let last = chain.next_seq - 1;
            match (seq, hash) {
                (Some(s), _) if s > last => {
                    return Err(Tampered {
                        line: line_no + 1,
                        reason: format!(
                            "the log ends at seq {last} but its head says {s}: records were removed from the end"
                        ),
                    });
                }
                (Some(s), Some(h)) if s == last && h != chain.head => {
                    return Err(Tampered {
                        line: line_no,
                        reason: "the last record is not the one the head file names".into(),
                    });
                }
                (Some(s), _) if s < last => warnings.push(format!(
                    "the head file names seq {s}, older than the last record {last} (a crash before it was updated?)"
                )),
                (Some(_), Some(_)) => {}
                _ => return Err(Tampered { line: line_no, reason: "the head file has no seq and hash".into() }),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(n: u64) -> Map<String, Value> {
        match json!({"type": "call", "tool": format!("t{n}"), "verdict": "allow"}) {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn trail(n: u64) -> (Vec<String>, Chain) {
        let (mut chain, genesis) = Chain::genesis("00ff", "2026-12-02T00:00:00Z");
        let mut lines = vec![genesis];
        for i in 0..n {
            lines.push(chain.seal(record(i)));
        }
        (lines, chain)
    }

    fn bytes(lines: &[String]) -> Vec<u8> {
        lines.iter().flat_map(|l| format!("{l}\n").into_bytes()).collect()
    }

    #[test]
    fn an_intact_log_verifies() {
        let (lines, chain) = trail(5);
        let v = verify(&bytes(&lines), Some(chain.head_text(None).as_bytes()), None).unwrap();
        assert_eq!((v.records, v.warnings.len()), (6, 0));
        assert_eq!(v.chain, chain);
        let canonical_text = canonical(&json!({"b": 1, "a": {"d": [1, {"f": 0, "e": 1}], "c": 2}}));
        assert_eq!(canonical_text, r#"{"a":{"c":2,"d":[1,{"e":1,"f":0}]},"b":1}"#);
    }

    #[test]
    fn every_kind_of_tampering_is_caught_at_its_line() {
        let (lines, chain) = trail(5);
        let head = chain.head_text(None);
        let check = |lines: &[String]| {
            verify(&bytes(lines), Some(head.as_bytes()), None).map(|_| ()).unwrap_err().line
        };
        let mut edited = lines.clone();
        edited[3] = edited[3].replace("\"allow\"", "\"deny\"");
        assert_eq!(check(&edited), 5, "an edit breaks the next line's prev");
        let mut last_edited = lines.clone();
        last_edited[5] = last_edited[5].replace("\"allow\"", "\"deny\"");
        assert_eq!(check(&last_edited), 6, "an edit of the last line contradicts the head");
        let mut deleted = lines.clone();
        deleted.remove(2);
        assert_eq!(check(&deleted), 3);
        let mut inserted = lines.clone();
        inserted.insert(2, lines[1].clone());
        assert_eq!(check(&inserted), 3);
        let mut swapped = lines.clone();
        swapped.swap(2, 3);
        assert_eq!(check(&swapped), 3);
        let truncated = lines[..4].to_vec();
        let e = verify(&bytes(&truncated), Some(head.as_bytes()), None).unwrap_err();
        assert!(e.reason.contains("removed from the end"), "{e}");
        let mut spaced = lines.clone();
        spaced[1] = spaced[1].replace(':', ": ");
        assert_eq!(check(&spaced), 2, "not canonical");
        let mut regenesis = lines.clone();
        regenesis[0] = Chain::genesis("0000", "2026-12-02T00:00:00Z").1;
        assert_eq!(check(&regenesis), 2, "a new genesis does not chain to the old records");
    }

    #[test]
    fn a_torn_last_line_is_a_warning_and_no_head_is_noted() {
        let (lines, chain) = trail(3);
        let mut b = bytes(&lines);
        b.extend_from_slice(br#"{"seq":4,"ty"#);
        let v = verify(&b, Some(chain.head_text(None).as_bytes()), None).unwrap();
        assert_eq!(v.records, 4);
        assert!(v.warnings[0].contains("cut short"), "{:?}", v.warnings);
        let v = verify(&bytes(&lines), None, None).unwrap();
        assert!(v.warnings[0].contains("no head file"));
    }

    #[test]
    fn a_rotated_file_continues_the_chain() {
        let (first, mut chain) = trail(2);
        let mut r = Map::new();
        r.insert("type".into(), "continued".into());
        let second = vec![chain.seal(r), chain.seal(record(9))];
        let (_, before) = trail(2);
        let v =
            verify(&bytes(&second), Some(chain.head_text(None).as_bytes()), Some(&before)).unwrap();
        assert_eq!(v.records, 2);
        assert!(verify(&bytes(&second), None, None).unwrap().warnings[0].contains("continues"));
        assert!(verify(&bytes(&first), None, None).is_ok());
    }

    #[test]
    fn secrets_are_digested() {
        let r = redact(&json!({"path": "/a", "apiKey": "s3cret", "nested": {"Password": "p"}}));
        assert_eq!(r["path"], "/a");
        assert!(r["apiKey"].as_str().unwrap().starts_with("sha256:"));
        assert!(r["nested"]["Password"].as_str().unwrap().starts_with("sha256:"));
    }
}
