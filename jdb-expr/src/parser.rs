//! A recursive-descent parser for jdb's expressions, with Java's precedence.

use super::lexer::{Tok, lex};

#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Char(u16),
    Str(String),
    Bool(bool),
    Null,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Lit(Lit),
    /// A simple name: a local, a field of `this`, a class or the start of a package (`this` too).
    Name(String),
    /// `base.name`: a field, `length` of an array, a nested class or the next part of a name.
    Field(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    /// `target.name(args)`, or `name(args)` on `this`/the current class.
    Call(Option<Box<Expr>>, String, Vec<Expr>),
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(type) expr`; the type as written (`int`, `java.lang.Object`, `String[]`).
    Cast(String, Box<Expr>),
    Assign(Box<Expr>, Box<Expr>),
    /// `new Type(args)`.
    New(String, Vec<Expr>),
}

pub fn parse(src: &str) -> Result<Expr, String> {
    let toks = lex(src)?;
    if toks.is_empty() {
        return Err("No expression specified.".into());
    }
    let mut p = Parser { toks, pos: 0 };
    let e = p.assignment()?;
    if p.pos < p.toks.len() {
        return Err(format!("Unexpected {} in expression", describe(&p.toks[p.pos])));
    }
    Ok(e)
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("'{s}'"),
        Tok::Op(o) => format!("'{o}'"),
        Tok::Str(s) => format!("\"{s}\""),
        other => format!("{other:?}"),
    }
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

const BINARY_LEVELS: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", ">", "<=", ">=", "instanceof"],
    &["<<", ">>", ">>>"],
    &["+", "-"],
    &["*", "/", "%"],
];

const PRIMITIVES: &[&str] = &["boolean", "byte", "char", "short", "int", "long", "float", "double"];

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.pos + n)
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }

    fn eat(&mut self, op: &str) -> bool {
        if self.is_op(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(match self.peek() {
                Some(t) => format!("Expected '{op}' but found {}", describe(t)),
                None => format!("Expected '{op}' at the end of the expression"),
            })
        }
    }

    fn ident(&mut self) -> Result<String, String> {
        match self.peek().cloned() {
            Some(Tok::Ident(s)) => {
                self.pos += 1;
                Ok(s)
            }
            Some(t) => Err(format!("Expected a name but found {}", describe(&t))),
            None => Err("Expected a name at the end of the expression".into()),
        }
    }

    fn assignment(&mut self) -> Result<Expr, String> {
        let lhs = self.conditional()?;
        if self.eat("=") {
            let rhs = self.assignment()?;
            return Ok(Expr::Assign(Box::new(lhs), Box::new(rhs)));
        }
        Ok(lhs)
    }

    fn conditional(&mut self) -> Result<Expr, String> {
        let c = self.binary(0)?;
        if self.eat("?") {
            let a = self.assignment()?;
            self.expect(":")?;
            let b = self.conditional()?;
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        if level == BINARY_LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            let op = match self.peek() {
                Some(Tok::Op(o)) if BINARY_LEVELS[level].contains(o) => *o,
                Some(Tok::Ident(s)) if s == "instanceof" && BINARY_LEVELS[level].contains(&"instanceof") => {
                    self.pos += 1;
                    let ty = self.type_name()?;
                    lhs = Expr::Binary("instanceof", Box::new(lhs), Box::new(Expr::Name(ty)));
                    continue;
                }
                _ => return Ok(lhs),
            };
            self.pos += 1;
            let rhs = self.binary(level + 1)?;
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        for op in ["-", "+", "!", "~"] {
            if self.eat(op) {
                if op == "-" && self.peek() == Some(&Tok::IntMinMagnitude) {
                    self.pos += 1;
                    return Ok(Expr::Lit(Lit::Int(i32::MIN)));
                }
                let e = self.unary()?;
                // Fold negative literals, so that -2147483648 and Long.MIN_VALUE parse.
                if op == "-" {
                    match e {
                        Expr::Lit(Lit::Int(v)) => return Ok(Expr::Lit(Lit::Int(v.wrapping_neg()))),
                        Expr::Lit(Lit::Long(v)) => return Ok(Expr::Lit(Lit::Long(v.wrapping_neg()))),
                        Expr::Lit(Lit::Double(v)) => return Ok(Expr::Lit(Lit::Double(-v))),
                        Expr::Lit(Lit::Float(v)) => return Ok(Expr::Lit(Lit::Float(-v))),
                        e => return Ok(Expr::Unary("-", Box::new(e))),
                    }
                }
                return Ok(Expr::Unary(op, Box::new(e)));
            }
        }
        if let Some(cast) = self.try_cast()? {
            return Ok(cast);
        }
        self.postfix()
    }

    /// `(Type) operand`, told from a parenthesized expression by what follows the `)`.
    fn try_cast(&mut self) -> Result<Option<Expr>, String> {
        if !self.is_op("(") {
            return Ok(None);
        }
        let save = self.pos;
        self.pos += 1;
        let Ok(ty) = self.type_name() else {
            self.pos = save;
            return Ok(None);
        };
        if !self.eat(")") {
            self.pos = save;
            return Ok(None);
        }
        let primitive = PRIMITIVES.contains(&ty.as_str());
        let starts_operand = match self.peek() {
            Some(Tok::Ident(_) | Tok::Int(_) | Tok::Long(_) | Tok::Float(_) | Tok::Double(_)) => true,
            Some(Tok::Char(_) | Tok::Str(_)) => true,
            Some(Tok::Op("(" | "!" | "~")) => true,
            Some(Tok::Op("-" | "+")) => primitive,
            _ => false,
        };
        if !starts_operand {
            self.pos = save;
            return Ok(None);
        }
        let e = self.unary()?;
        Ok(Some(Expr::Cast(ty, Box::new(e))))
    }

    /// `a.b.C`, `int`, `String[]`.
    fn type_name(&mut self) -> Result<String, String> {
        let mut name = self.ident()?;
        while self.is_op(".") && matches!(self.peek_at(1), Some(Tok::Ident(_))) {
            self.pos += 1;
            name.push('.');
            name.push_str(&self.ident()?);
        }
        while self.is_op("[") && matches!(self.peek_at(1), Some(Tok::Op("]"))) {
            self.pos += 2;
            name.push_str("[]");
        }
        Ok(name)
    }

    fn postfix(&mut self) -> Result<Expr, String> {
        let mut e = self.primary()?;
        loop {
            if self.eat(".") {
                let name = self.ident()?;
                if self.eat("(") {
                    let args = self.arguments()?;
                    e = Expr::Call(Some(Box::new(e)), name, args);
                } else {
                    e = Expr::Field(Box::new(e), name);
                }
            } else if self.eat("[") {
                let index = self.assignment()?;
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(index));
            } else {
                return Ok(e);
            }
        }
    }

    fn arguments(&mut self) -> Result<Vec<Expr>, String> {
        let mut args = Vec::new();
        if self.eat(")") {
            return Ok(args);
        }
        loop {
            args.push(self.assignment()?);
            if self.eat(")") {
                return Ok(args);
            }
            self.expect(",")?;
        }
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let Some(t) = self.peek().cloned() else {
            return Err("Unexpected end of expression".into());
        };
        self.pos += 1;
        Ok(match t {
            Tok::Int(v) => Expr::Lit(Lit::Int(v)),
            Tok::IntMinMagnitude => return Err("Integer too large: 2147483648".into()),
            Tok::Long(v) => Expr::Lit(Lit::Long(v)),
            Tok::Float(v) => Expr::Lit(Lit::Float(v)),
            Tok::Double(v) => Expr::Lit(Lit::Double(v)),
            Tok::Char(v) => Expr::Lit(Lit::Char(v)),
            Tok::Str(s) => Expr::Lit(Lit::Str(s)),
            Tok::Op("(") => {
                let e = self.assignment()?;
                self.expect(")")?;
                e
            }
            Tok::Ident(s) => match s.as_str() {
                "true" => Expr::Lit(Lit::Bool(true)),
                "false" => Expr::Lit(Lit::Bool(false)),
                "null" => Expr::Lit(Lit::Null),
                "new" => {
                    let ty = self.type_name()?;
                    self.expect("(")?;
                    let args = self.arguments()?;
                    Expr::New(ty, args)
                }
                _ if self.eat("(") => {
                    let args = self.arguments()?;
                    Expr::Call(None, s, args)
                }
                _ => Expr::Name(s),
            },
            other => return Err(format!("Unexpected {} in expression", describe(&other))),
        })
    }
}

impl Expr {
    /// The dotted name this expression spells, if it is one (`a.b.c`).
    pub fn dotted_name(&self) -> Option<String> {
        match self {
            Expr::Name(n) => Some(n.clone()),
            Expr::Field(base, n) => Some(format!("{}.{n}", base.dotted_name()?)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Box<Expr> {
        Box::new(Expr::Name(s.into()))
    }

    #[test]
    fn precedence_and_postfix() {
        assert_eq!(
            parse("a + b * 2").unwrap(),
            Expr::Binary("+", name("a"), Box::new(Expr::Binary("*", name("b"), Box::new(Expr::Lit(Lit::Int(2))))))
        );
        assert_eq!(
            parse("x.y[1].m(2, 'c').length").unwrap(),
            Expr::Field(
                Box::new(Expr::Call(
                    Some(Box::new(Expr::Index(
                        Box::new(Expr::Field(name("x"), "y".into())),
                        Box::new(Expr::Lit(Lit::Int(1)))
                    ))),
                    "m".into(),
                    vec![Expr::Lit(Lit::Int(2)), Expr::Lit(Lit::Char(99))]
                )),
                "length".into()
            )
        );
        assert_eq!(parse("-2147483648").unwrap(), Expr::Lit(Lit::Int(i32::MIN)));
        assert!(matches!(parse("a == b && !c || d").unwrap(), Expr::Binary("||", _, _)));
        assert!(matches!(parse("a ? b : c").unwrap(), Expr::Cond(..)));
        assert!(matches!(parse("x = y = 3").unwrap(), Expr::Assign(..)));
    }

    #[test]
    fn casts_versus_parentheses() {
        assert_eq!(parse("(Object) s").unwrap(), Expr::Cast("Object".into(), name("s")));
        assert_eq!(parse("(int) -x").unwrap(), Expr::Cast("int".into(), Box::new(Expr::Unary("-", name("x")))));
        assert_eq!(parse("(a) + b").unwrap(), Expr::Binary("+", name("a"), name("b")));
        assert_eq!(parse("(java.lang.String[]) o").unwrap(), Expr::Cast("java.lang.String[]".into(), name("o")));
    }

    #[test]
    fn errors() {
        assert!(parse("").is_err());
        assert!(parse("a +").is_err());
        assert!(parse("f(1,").is_err());
        assert!(parse("a b").is_err());
        assert!(parse("(1").is_err());
    }
}
