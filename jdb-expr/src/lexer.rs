//! Tokens of jdb's expression language (a subset of Java's).

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Char(u16),
    Str(String),
    /// `2147483648` without a suffix: valid only after a minus sign.
    IntMinMagnitude,
    /// Operators and punctuation: `(`, `)`, `[`, `]`, `.`, `,`, `?`, `:`, `+`, `==`, `>>>`...
    Op(&'static str),
}

/// Operators, longest first so that `>>>=`-like prefixes are matched greedily.
const OPS: &[&str] = &[
    ">>>", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "[", "]", ".", ",", "?", ":", "+", "-", "*", "/",
    "%", "<", ">", "!", "~", "&", "|", "^", "=",
];

pub fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_alphabetic() || c == '_' || c == '$' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let (tok, next) = number(&chars, i)?;
            out.push(tok);
            i = next;
            continue;
        }
        if c == '"' {
            let (s, next) = quoted(&chars, i, '"')?;
            out.push(Tok::Str(s));
            i = next;
            continue;
        }
        if c == '\'' {
            let (s, next) = quoted(&chars, i, '\'')?;
            let units: Vec<u16> = s.encode_utf16().collect();
            if units.len() != 1 {
                return Err(format!("Invalid character literal: '{s}'"));
            }
            out.push(Tok::Char(units[0]));
            i = next;
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
        match OPS.iter().find(|op| rest.starts_with(**op)) {
            Some(op) => {
                out.push(Tok::Op(op));
                i += op.chars().count();
            }
            None => return Err(format!("Unexpected character '{c}'")),
        }
    }
    Ok(out)
}

fn number(chars: &[char], start: usize) -> Result<(Tok, usize), String> {
    let mut i = start;
    let radix_prefix = chars[i] == '0' && chars.get(i + 1).is_some_and(|c| matches!(c, 'x' | 'X' | 'b' | 'B'));
    if radix_prefix {
        i += 2;
    }
    let body_start = i;
    let mut is_float = false;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_hexdigit() && radix_prefix || c.is_ascii_digit() || c == '_' {
            i += 1;
        } else if !radix_prefix && c == '.' && !is_float {
            is_float = true;
            i += 1;
        } else if !radix_prefix && matches!(c, 'e' | 'E') {
            is_float = true;
            i += 1;
            if chars.get(i).is_some_and(|c| matches!(c, '+' | '-')) {
                i += 1;
            }
        } else {
            break;
        }
    }
    let text: String = chars[body_start..i].iter().filter(|c| **c != '_').collect();
    let suffix = chars.get(i).copied().map(|c| c.to_ascii_lowercase());
    let bad = || format!("Invalid number: {}", chars[start..i].iter().collect::<String>());
    if radix_prefix {
        let radix = if matches!(chars[start + 1], 'x' | 'X') { 16 } else { 2 };
        let v = u64::from_str_radix(&text, radix).map_err(|_| bad())?;
        return Ok(match suffix {
            Some('l') => (Tok::Long(v as i64), i + 1),
            _ => (Tok::Int(i32::try_from(v).or_else(|_| u32::try_from(v).map(|u| u as i32)).map_err(|_| bad())?), i),
        });
    }
    match suffix {
        Some('f') => return Ok((Tok::Float(text.parse().map_err(|_| bad())?), i + 1)),
        Some('d') => return Ok((Tok::Double(text.parse().map_err(|_| bad())?), i + 1)),
        _ => {}
    }
    if is_float {
        return Ok((Tok::Double(text.parse().map_err(|_| bad())?), i));
    }
    let (digits, radix) = if text.len() > 1 && text.starts_with('0') { (&text[1..], 8) } else { (text.as_str(), 10) };
    let v = u64::from_str_radix(digits, radix).map_err(|_| bad())?;
    match suffix {
        Some('l') => Ok((Tok::Long(v as i64), i + 1)),
        // 2147483648 is only valid after a minus sign; the parser folds it.
        _ if v == 1 << 31 => Ok((Tok::IntMinMagnitude, i)),
        _ => Ok((Tok::Int(i32::try_from(v).map_err(|_| format!("Integer too large: {text}"))?), i)),
    }
}

fn quoted(chars: &[char], start: usize, q: char) -> Result<(String, usize), String> {
    let mut i = start + 1;
    let mut s = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == q {
            return Ok((s, i + 1));
        }
        if c == '\\' {
            i += 1;
            let e = *chars.get(i).ok_or("Unterminated literal")?;
            match e {
                'n' => s.push('\n'),
                't' => s.push('\t'),
                'r' => s.push('\r'),
                'b' => s.push('\u{8}'),
                'f' => s.push('\u{c}'),
                '0'..='7' => {
                    let mut v = e.to_digit(8).unwrap_or(0);
                    while v < 32 && chars.get(i + 1).is_some_and(|d| d.is_digit(8)) {
                        i += 1;
                        v = v * 8 + chars[i].to_digit(8).unwrap_or(0);
                    }
                    s.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                }
                'u' => {
                    let hex: String = chars.get(i + 1..i + 5).ok_or("Invalid unicode escape")?.iter().collect();
                    let v = u32::from_str_radix(&hex, 16).map_err(|_| "Invalid unicode escape")?;
                    s.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                    i += 4;
                }
                other => s.push(other),
            }
        } else {
            s.push(c);
        }
        i += 1;
    }
    Err("Unterminated literal".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        assert_eq!(
            lex("a.b[1] >= 0x1fL + 'c' - \"s\\n\" >>> 2.5f").unwrap(),
            vec![
                Tok::Ident("a".into()),
                Tok::Op("."),
                Tok::Ident("b".into()),
                Tok::Op("["),
                Tok::Int(1),
                Tok::Op("]"),
                Tok::Op(">="),
                Tok::Long(31),
                Tok::Op("+"),
                Tok::Char(b'c' as u16),
                Tok::Op("-"),
                Tok::Str("s\n".into()),
                Tok::Op(">>>"),
                Tok::Float(2.5),
            ]
        );
        assert_eq!(lex("1.5e3 010 1_000").unwrap(), vec![Tok::Double(1500.0), Tok::Int(8), Tok::Int(1000)]);
        assert!(lex("99999999999").is_err());
        assert!(lex("\"open").is_err());
        assert!(lex("a # b").is_err());
    }
}
