//! Logpoint messages: text with `{expression}` parts, split here without a VM so the adapter
//! only evaluates. Braces nest (`{new int[]{1, 2}.length}`), and braces inside string or char
//! literals do not count (`{m.get("}")}`); an unclosed `{` is left as text.

/// A piece of a logpoint message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    Text(&'a str),
    Expr(&'a str),
}

/// Splits a message into text and the expressions to interpolate, in order.
pub fn split(template: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(len) = expr_len(&rest[open + 1..]) else { break };
        if open > 0 {
            out.push(Piece::Text(&rest[..open]));
        }
        out.push(Piece::Expr(&rest[open + 1..open + 1 + len]));
        rest = &rest[open + 2 + len..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    out
}

/// The length of the expression before its closing `}`, or `None` if it is never closed.
fn expr_len(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::Piece::{Expr, Text};
    use super::*;

    #[test]
    fn text_and_expressions() {
        assert_eq!(split("square of {x} is {x * x}"), vec![Text("square of "), Expr("x"), Text(" is "), Expr("x * x")]);
        assert_eq!(split("{a}{b}"), vec![Expr("a"), Expr("b")]);
        assert_eq!(split("no braces"), vec![Text("no braces")]);
        assert_eq!(split(""), Vec::<Piece>::new());
        assert_eq!(split("{}"), vec![Expr("")]);
    }

    #[test]
    fn nested_braces_and_literals() {
        assert_eq!(split("n={new int[]{1, 2}.length}!"), vec![Text("n="), Expr("new int[]{1, 2}.length"), Text("!")]);
        assert_eq!(split(r#"v={m.get("}")} w"#), vec![Text("v="), Expr(r#"m.get("}")"#), Text(" w")]);
        assert_eq!(split(r#"{s.indexOf("\"}")}"#), vec![Expr(r#"s.indexOf("\"}")"#)]);
        assert_eq!(split("c={c == '}'}"), vec![Text("c="), Expr("c == '}'")]);
    }

    #[test]
    fn unclosed_brace_is_text() {
        assert_eq!(split("a {b"), vec![Text("a {b")]);
        assert_eq!(split("{x} and {y"), vec![Expr("x"), Text(" and {y")]);
        assert_eq!(split("{m.get(\"}"), vec![Text("{m.get(\"}")]);
    }
}
