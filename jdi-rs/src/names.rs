//! Conversions between Java's names for types and JNI signatures.

/// `java.lang.String` → `Ljava/lang/String;`, `int[]` → `[I`, `int` → `I`.
pub fn signature_of_type_name(name: &str) -> String {
    let mut dims = 0;
    let mut base = name.trim();
    while let Some(stripped) = base.strip_suffix("[]") {
        dims += 1;
        base = stripped;
    }
    let base_sig = match base {
        "boolean" => "Z".to_string(),
        "byte" => "B".to_string(),
        "char" => "C".to_string(),
        "short" => "S".to_string(),
        "int" => "I".to_string(),
        "long" => "J".to_string(),
        "float" => "F".to_string(),
        "double" => "D".to_string(),
        "void" => "V".to_string(),
        class => format!("L{};", swap_separators(class)),
    };
    "[".repeat(dims) + &base_sig
}

/// `Ljava/lang/String;` → `java.lang.String`, `[I` → `int[]`. Unknown input is returned as is.
pub fn type_name_of_signature(sig: &str) -> String {
    let dims = sig.bytes().take_while(|b| *b == b'[').count();
    let base = &sig[dims..];
    let name = match base {
        "Z" => "boolean".to_string(),
        "B" => "byte".to_string(),
        "C" => "char".to_string(),
        "S" => "short".to_string(),
        "I" => "int".to_string(),
        "J" => "long".to_string(),
        "F" => "float".to_string(),
        "D" => "double".to_string(),
        "V" => "void".to_string(),
        _ => match base.strip_prefix('L').and_then(|b| b.strip_suffix(';')) {
            Some(class) => swap_separators(class),
            None => return sig.to_string(),
        },
    };
    name + &"[]".repeat(dims)
}

/// Between a class name and its internal form: `.` and `/` trade places. The one `.` of an
/// internal form is a hidden class's suffix (`LDemo$$Lambda.0x1c;`), which `Class.getName()` and
/// JDI show as `Demo$$Lambda/0x1c`.
fn swap_separators(class: &str) -> String {
    class
        .chars()
        .map(|c| match c {
            '/' => '.',
            '.' => '/',
            c => c,
        })
        .collect()
}

/// Splits a method signature `(ILjava/lang/String;)V` into argument signatures and return signature.
pub fn split_method_signature(sig: &str) -> Option<(Vec<String>, String)> {
    let rest = sig.strip_prefix('(')?;
    let (args, ret) = rest.split_once(')')?;
    let mut out = Vec::new();
    let bytes = args.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i] == b'[' {
            i += 1;
        }
        if i >= bytes.len() {
            return None;
        }
        if bytes[i] == b'L' {
            i += args[i..].find(';')? + 1;
        } else {
            i += 1;
        }
        out.push(args[start..i].to_string());
    }
    Some((out, ret.to_string()))
}

/// Whether `sig` is the signature of a primitive type (`Z B C S I J F D`; not `V`).
pub fn is_primitive_signature(sig: &str) -> bool {
    matches!(sig, "Z" | "B" | "C" | "S" | "I" | "J" | "F" | "D")
}

/// Whether `sig` names a reference type: a class, interface or array signature.
pub fn is_reference_signature(sig: &str) -> bool {
    sig.starts_with('[') || (sig.starts_with('L') && sig.ends_with(';'))
}

/// The component signature of an array signature: `[[I` → `[I`; `None` for non-arrays.
pub fn component_signature(sig: &str) -> Option<&str> {
    sig.strip_prefix('[').filter(|c| !c.is_empty())
}

/// The package of a class signature, in source form: `Ljava/lang/String;` → `java.lang`, `LDemo;` → ``.
pub fn package_of_signature(sig: &str) -> String {
    let class = sig.strip_prefix('L').and_then(|s| s.strip_suffix(';')).unwrap_or(sig);
    class.rsplit_once('/').map(|(pkg, _)| pkg.replace('/', ".")).unwrap_or_default()
}

/// Where a class's source file lives relative to a source root: its package directories plus the
/// source file name (`Ljava/lang/String;` + `String.java` → `java/lang/String.java`).
pub fn source_path(class_signature: &str, source_name: &str) -> String {
    let class = class_signature.strip_prefix('L').and_then(|s| s.strip_suffix(';')).unwrap_or(class_signature);
    match class.rsplit_once('/') {
        Some((dirs, _)) => format!("{dirs}/{source_name}"),
        None => source_name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_signatures_convert_both_ways() {
        for (name, sig) in [
            ("java.lang.String", "Ljava/lang/String;"),
            ("int", "I"),
            ("int[][]", "[[I"),
            ("Demo$Inner[]", "[LDemo$Inner;"),
            // A hidden class: JVMTI's signature has a `.` before the suffix, its name a `/`.
            ("Demo$$Lambda/0x000000002a040438", "LDemo$$Lambda.0x000000002a040438;"),
            ("java.lang.invoke.LambdaForm$MH/0x1c", "Ljava/lang/invoke/LambdaForm$MH.0x1c;"),
        ] {
            assert_eq!(signature_of_type_name(name), sig);
            assert_eq!(type_name_of_signature(sig), name);
        }
    }

    #[test]
    fn method_signatures_split() {
        let (args, ret) = split_method_signature("(I[JLjava/lang/String;[[LFoo;Z)V").unwrap();
        assert_eq!(args, ["I", "[J", "Ljava/lang/String;", "[[LFoo;", "Z"]);
        assert_eq!(ret, "V");
        assert!(split_method_signature("(L").is_none());
    }

    #[test]
    fn signature_kinds_components_and_packages() {
        assert!(is_primitive_signature("J"));
        assert!(!is_primitive_signature("V"));
        assert!(!is_primitive_signature("[I"));
        assert!(is_reference_signature("[I") && is_reference_signature("LFoo;") && !is_reference_signature("I"));
        assert_eq!(component_signature("[[I"), Some("[I"));
        assert_eq!(component_signature("[Ljava/lang/String;"), Some("Ljava/lang/String;"));
        assert_eq!(component_signature("I"), None);
        assert_eq!(package_of_signature("Ljava/lang/String;"), "java.lang");
        assert_eq!(package_of_signature("LDemo;"), "");
        assert_eq!(source_path("Ljava/util/Map$Entry;", "Map.java"), "java/util/Map.java");
        assert_eq!(source_path("LDemo;", "Demo.java"), "Demo.java");
    }
}
