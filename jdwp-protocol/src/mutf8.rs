//! Modified UTF-8, JNI's string encoding (the agent's strings to and from the VM). JDWP itself
//! carries standard UTF-8, which the JDK's agent converts to; [`decode`] reads both, since older
//! agents send modified UTF-8.
//!
//! It differs from UTF-8 in two ways: U+0000 is written as the two bytes `C0 80`, and characters
//! outside the Basic Multilingual Plane are written as a UTF-16 surrogate pair, each half encoded
//! as a three-byte sequence (six bytes in all). Java strings may hold unpaired surrogates, which a
//! Rust `String` cannot; those, and any malformed byte, decode to U+FFFD instead of failing, so a
//! debugger can always show a name.

/// Encodes `s` as modified UTF-8.
pub fn encode(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for unit in s.encode_utf16() {
        push_unit(&mut out, unit);
    }
    out
}

fn push_unit(out: &mut Vec<u8>, unit: u16) {
    match unit {
        1..=0x7f => out.push(unit as u8),
        0 | 0x80..=0x7ff => {
            out.push(0xc0 | (unit >> 6) as u8);
            out.push(0x80 | (unit & 0x3f) as u8);
        }
        _ => {
            out.push(0xe0 | (unit >> 12) as u8);
            out.push(0x80 | ((unit >> 6) & 0x3f) as u8);
            out.push(0x80 | (unit & 0x3f) as u8);
        }
    }
}

/// Decodes modified UTF-8 (also accepting standard four-byte UTF-8 sequences, which some VMs emit).
pub fn decode(bytes: &[u8]) -> String {
    // Fast path: pure ASCII without NUL is identical in both encodings.
    // (One copy, not a char at a time: class signatures come through here by the thousand.)
    if bytes.iter().all(|b| (1..0x80).contains(b))
        && let Ok(ascii) = std::str::from_utf8(bytes)
    {
        return ascii.to_owned();
    }
    let mut units: Vec<u16> = Vec::with_capacity(bytes.len());
    let mut extra = String::new();
    let mut i = 0;
    let cont = |b: Option<&u8>| b.filter(|b| **b & 0xc0 == 0x80).map(|b| u16::from(*b & 0x3f));
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            0x00..=0x7f => {
                units.push(u16::from(b));
                i += 1;
            }
            0xc0..=0xdf => match cont(bytes.get(i + 1)) {
                Some(c1) => {
                    units.push((u16::from(b & 0x1f) << 6) | c1);
                    i += 2;
                }
                None => {
                    units.push(0xfffd);
                    i += 1;
                }
            },
            0xe0..=0xef => match (cont(bytes.get(i + 1)), cont(bytes.get(i + 2))) {
                (Some(c1), Some(c2)) => {
                    units.push((u16::from(b & 0x0f) << 12) | (c1 << 6) | c2);
                    i += 3;
                }
                _ => {
                    units.push(0xfffd);
                    i += 1;
                }
            },
            0xf0..=0xf7 => {
                // Standard UTF-8 four-byte form: re-encode as a surrogate pair.
                match std::str::from_utf8(bytes.get(i..i + 4).unwrap_or(&[])) {
                    Ok(s) => {
                        extra.clear();
                        extra.push_str(s);
                        units.extend(extra.encode_utf16());
                        i += 4;
                    }
                    Err(_) => {
                        units.push(0xfffd);
                        i += 1;
                    }
                }
            }
            _ => {
                units.push(0xfffd);
                i += 1;
            }
        }
    }
    String::from_utf16_lossy(&units)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_and_supplementary_characters_use_java_forms() {
        let s = "a\0é€😀";
        let enc = encode(s);
        assert_eq!(&enc[1..3], &[0xc0, 0x80]);
        // 😀 is a surrogate pair: two three-byte sequences.
        assert_eq!(enc.len(), 1 + 2 + 2 + 3 + 6);
        assert_eq!(decode(&enc), s);
    }

    #[test]
    fn ascii_takes_the_fast_path_unchanged() {
        assert_eq!(decode(b"Ljava/lang/String;"), "Ljava/lang/String;");
        assert_eq!(decode(b""), "");
        // A NUL is two bytes in modified UTF-8; a lone 0 byte is not ASCII's fast path.
        assert_eq!(decode(&[b'a', 0xc0, 0x80]), "a\0");
        assert_eq!(decode(&encode("LA$B;")), "LA$B;");
    }

    #[test]
    fn garbage_decodes_without_panicking() {
        for bytes in [&[0xff][..], &[0xe0, 0x80], &[0xc0], &[0xf0, 0x9f], &[0xed, 0xa0, 0x80]] {
            let _ = decode(bytes);
        }
        assert_eq!(decode(&[0xf0, 0x9f, 0x98, 0x80]), "😀");
    }
}
