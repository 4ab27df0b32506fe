//! Strata for stepping (JSR-45): a class whose `SourceDebugExtension` holds an SMAP was generated
//! from another language (JSP, a template, a DSL), and a line step in that language's stratum
//! ends where *its* line changes, not where the Java line does.
//!
//! The debugger picks the stratum with `VirtualMachine.SetDefaultStratum`; without one, a class's
//! SMAP names its own default. As the JDK's agent does, a line step converts the method's Java line
//! table into that stratum before judging steps: each entry's Java line becomes the stratum line
//! it maps to, entries that map to nothing are dropped (their code belongs to the line before),
//! and runs of the same line merge. The Java stratum, a class without an SMAP, or a stratum the
//! SMAP does not have leave the table as it is. Locations themselves stay in Java lines: JDI maps
//! them to strata on its side.

use crate::agent::{Agent, lock};

/// `VirtualMachine.SetDefaultStratum` (an empty name goes back to each class's default).
pub fn set_default_stratum(agent: &Agent, stratum: &str) {
    *lock(&agent.engine.default_stratum) = (!stratum.is_empty()).then(|| stratum.to_owned());
}

/// The stratum set by the debugger, if any.
pub fn default_stratum(agent: &Agent) -> Option<String> {
    lock(&agent.engine.default_stratum).clone()
}

/// One line section entry: `InputStartLine[#FileId][,RepeatCount]:OutputStartLine[,OutputLineIncrement]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LineInfo {
    input_start: i32,
    repeat: i32,
    output_start: i32,
    output_increment: i32,
}

impl LineInfo {
    fn parse(text: &str) -> Option<LineInfo> {
        let (input, output) = text.split_once(':')?;
        let (input, repeat) = match input.split_once(',') {
            Some((i, r)) => (i, r.trim().parse().ok()?),
            None => (input, 1),
        };
        let input = input.split_once('#').map_or(input, |(line, _file)| line);
        let (output_start, output_increment) = match output.split_once(',') {
            Some((o, inc)) => (o.trim().parse().ok()?, inc.trim().parse().ok()?),
            None => (output.trim().parse().ok()?, 1),
        };
        Some(LineInfo { input_start: input.trim().parse().ok()?, repeat, output_start, output_increment })
    }

    /// The stratum line of Java (output) line `java`, if this entry covers it.
    fn map(&self, java: i32) -> Option<i32> {
        let end = self.output_start + self.repeat * self.output_increment - 1;
        (self.output_increment > 0 && (self.output_start..=end).contains(&java))
            .then(|| self.input_start + (java - self.output_start) / self.output_increment)
    }
}

/// A parsed SMAP: its default stratum and each stratum's line section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Smap {
    default_stratum: String,
    strata: Vec<(String, Vec<LineInfo>)>,
}

impl Smap {
    /// Parses SMAP text; `None` if it is not one. Sections other than strata, files and lines
    /// (vendor, embedded SMAPs) are skipped.
    pub fn parse(text: &str) -> Option<Smap> {
        let mut lines = text.lines().map(str::trim_end);
        if lines.next()? != "SMAP" {
            return None;
        }
        let _output_file = lines.next()?;
        let default_stratum = lines.next()?.trim().to_owned();
        let mut strata: Vec<(String, Vec<LineInfo>)> = Vec::new();
        let mut in_lines = false;
        for line in lines {
            if let Some(section) = line.strip_prefix('*') {
                in_lines = false;
                if let Some(name) = section.strip_prefix('S') {
                    strata.push((name.trim().to_owned(), Vec::new()));
                } else if section.starts_with('L') {
                    in_lines = true;
                } else if section.starts_with('E') {
                    break;
                }
            } else if in_lines && let (Some((_, infos)), Some(info)) = (strata.last_mut(), LineInfo::parse(line)) {
                infos.push(info);
            }
        }
        Some(Smap { default_stratum, strata })
    }

    /// Converts a Java line table ((code index, line), in code order) into `stratum`, or the SMAP's
    /// default when that is `None` or a stratum the SMAP does not have (as the JDK's agent does);
    /// `None` if no conversion applies (the Java stratum).
    pub fn convert(&self, stratum: Option<&str>, table: &[(i64, i32)]) -> Option<Vec<(i64, i32)>> {
        let find = |name: &str| self.strata.iter().find(|(s, _)| s == name).map(|(_, infos)| infos);
        if stratum == Some("Java") {
            return None;
        }
        let infos = match stratum.and_then(find) {
            Some(infos) => infos,
            None if self.default_stratum == "Java" => return None,
            None => find(&self.default_stratum)?,
        };
        let mut out: Vec<(i64, i32)> = Vec::with_capacity(table.len());
        for &(index, java) in table {
            let Some(line) = infos.iter().find_map(|info| info.map(java)) else { continue };
            if out.last().is_none_or(|&(_, last)| last != line) {
                out.push((index, line));
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SMAP of OpenJDK's com/sun/jdi/sde/MangleStepTest.
    const MANGLE: &str = "SMAP\nMangle.java\nXYZ\n*S XYZ\n*F\n+ 1 Mangle.xyz\ndatabase14\n2 Incl.xyz\n*L\n\
                          200#2:5,2\n210#1:7\n217,2:8\n*S Rats\n*F\n0 Mangle.rats\n+ 2 Incl.rats\n\
                          bleep:bleep:Incl.rats\n*L\n1000:4\n1111#2,2:5,2\n*E\n";

    /// main() of Mangle: Java lines 4 to 9, one entry each.
    fn java_table() -> Vec<(i64, i32)> {
        (4..=9).map(|line| (i64::from(line - 4) * 3, line)).collect()
    }

    #[test]
    fn line_entries_parse_with_and_without_optional_parts() {
        let e = |s| LineInfo::parse(s).unwrap();
        assert_eq!(e("200#2:5,2"), LineInfo { input_start: 200, repeat: 1, output_start: 5, output_increment: 2 });
        assert_eq!(e("217,2:8"), LineInfo { input_start: 217, repeat: 2, output_start: 8, output_increment: 1 });
        assert_eq!(e("1111#2,2:5,2"), LineInfo { input_start: 1111, repeat: 2, output_start: 5, output_increment: 2 });
        assert_eq!(LineInfo::parse("bleep:bleep:Incl.rats"), None);
        // 1111#2,2:5,2 covers Java lines 5..=8, two Java lines per stratum line.
        let rats = e("1111#2,2:5,2");
        assert_eq!(
            [4, 5, 6, 7, 8, 9].map(|j| rats.map(j)),
            [None, Some(1111), Some(1111), Some(1112), Some(1112), None]
        );
    }

    #[test]
    fn tables_convert_to_the_chosen_stratum_dropping_and_merging_lines() {
        let smap = Smap::parse(MANGLE).unwrap();
        // The class's default (XYZ): Java 4 maps to nothing, 5 and 6 to 200.
        assert_eq!(smap.convert(None, &java_table()), Some(vec![(3, 200), (9, 210), (12, 217), (15, 218)]));
        assert_eq!(smap.convert(Some("Rats"), &java_table()), Some(vec![(0, 1000), (3, 1111), (9, 1112)]));
        assert_eq!(smap.convert(Some("Java"), &java_table()), None);
        // A stratum the SMAP lacks falls back to its default.
        assert_eq!(smap.convert(Some("bogus"), &java_table()), smap.convert(None, &java_table()));
        let java_default = Smap::parse("SMAP\nA.java\nJava\n*S X\n*L\n1:1\n*E\n").unwrap();
        assert_eq!(java_default.convert(Some("bogus"), &java_table()), None);
        assert_eq!(java_default.convert(Some("X"), &java_table()), Some(vec![]));
        assert_eq!(Smap::parse("not an smap"), None);
    }
}
