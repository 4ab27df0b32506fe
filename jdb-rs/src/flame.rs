//! Flame graphs: folded stacks (`root;caller;callee count`, one stack per line, the format of
//! Brendan Gregg's `stackcollapse` tools) rendered as one self-contained SVG a browser opens.
//!
//! Each frame is a box whose width is proportional to the samples of the stacks passing through
//! it; children sit above their parent, sorted by name (as flame graphs do, so the x axis is not
//! time). Hovering shows the frame's name, samples and share; clicking a frame zooms to it (its
//! ancestors stay, stretched, its siblings fade), clicking the bottom "all" frame resets. The
//! script is a few lines embedded in the file, so the graph needs nothing else.
//!
//! Written for this project (the usual crate for this is under a license we do not take).

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One stack, root first, and how many samples it had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldedStack {
    pub frames: Vec<String>,
    pub count: u64,
}

/// A folded-stacks line that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct FoldedError {
    pub line: usize,
    pub reason: &'static str,
}

/// Parses folded stacks: `frame;frame;frame COUNT` per line; blank lines are skipped.
pub fn parse_folded(text: &str) -> Result<Vec<FoldedStack>, FoldedError> {
    let mut stacks = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            continue;
        }
        let err = |reason| FoldedError { line: i + 1, reason };
        let (frames, count) = line.rsplit_once(' ').ok_or_else(|| err("no sample count"))?;
        let count = count.parse::<u64>().map_err(|_| err("sample count is not a number"))?;
        if frames.is_empty() {
            return Err(err("no frames"));
        }
        stacks.push(FoldedStack { frames: frames.split(';').map(str::to_owned).collect(), count });
    }
    Ok(stacks)
}

/// Writes stacks in the folded format [`parse_folded`] reads (frames must not contain `;` or
/// newlines; those are replaced by `,` and spaces).
pub fn to_folded(stacks: &[FoldedStack]) -> String {
    let mut out = String::new();
    for stack in stacks {
        let frames: Vec<String> = stack.frames.iter().map(|f| f.replace(';', ",").replace('\n', " ")).collect();
        let _ = writeln!(out, "{} {}", frames.join(";"), stack.count);
    }
    out
}

/// How the graph looks.
#[derive(Debug, Clone)]
pub struct FlameOptions {
    pub title: String,
    /// Total width in pixels.
    pub width: f64,
    pub frame_height: f64,
    /// Frames narrower than this (pixels) are left out: unreadable, and they bloat the file.
    pub min_width: f64,
    /// What a sample is called in the tooltips ("samples", "bytes").
    pub unit: String,
}

impl Default for FlameOptions {
    fn default() -> Self {
        FlameOptions {
            title: "Flame Graph".into(),
            width: 1200.0,
            frame_height: 16.0,
            min_width: 0.1,
            unit: "samples".into(),
        }
    }
}

/// A node of the merged call tree.
#[derive(Default)]
struct Node {
    count: u64,
    children: BTreeMap<String, Node>,
}

impl Node {
    fn depth(&self) -> usize {
        self.children.values().map(|c| 1 + c.depth()).max().unwrap_or(0)
    }
}

const X_PAD: f64 = 10.0;
const TITLE_HEIGHT: f64 = 40.0;
const BOTTOM_PAD: f64 = 24.0;
const FONT_SIZE: f64 = 12.0;
/// Average glyph width of the font at `FONT_SIZE`, to decide how much of a name fits.
const CHAR_WIDTH: f64 = FONT_SIZE * 0.59;

/// Renders `stacks` as an SVG flame graph.
pub fn render_svg(stacks: &[FoldedStack], options: &FlameOptions) -> String {
    let mut root = Node::default();
    for stack in stacks.iter().filter(|s| s.count > 0) {
        root.count += stack.count;
        let mut node = &mut root;
        for frame in &stack.frames {
            node = node.children.entry(frame.clone()).or_default();
            node.count += stack.count;
        }
    }
    let depth = root.depth() + 1; // + the "all" frame
    let height = TITLE_HEIGHT + depth as f64 * options.frame_height + BOTTOM_PAD;
    let graph_width = options.width - 2.0 * X_PAD;
    let mut svg = String::new();
    let _ = write!(
        svg,
        concat!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="no"?>"#,
            "\n",
            r#"<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" "#,
            r#"viewBox="0 0 {w} {h}" onload="init(evt)">"#,
            "\n",
            "<style>text {{ font-family: monospace; font-size: {fs}px; fill: #000; pointer-events: none; }} ",
            ".f:hover rect {{ stroke: #000; stroke-width: 0.5; }} .f {{ cursor: pointer; }}</style>\n",
            "<script><![CDATA[{script}]]></script>\n",
            r##"<rect x="0" y="0" width="{w}" height="{h}" fill="#f8f8f0"/>"##,
            "\n",
            r#"<text x="{cx}" y="24" text-anchor="middle" style="font-size:17px">{title}</text>"#,
            "\n",
            r#"<text id="details" x="{X_PAD}" y="{dy}"> </text>"#,
            "\n",
        ),
        w = fmt_num(options.width),
        h = fmt_num(height),
        fs = FONT_SIZE,
        script = SCRIPT,
        cx = fmt_num(options.width / 2.0),
        title = escape(&options.title),
        X_PAD = X_PAD,
        dy = fmt_num(height - 8.0),
    );
    let layout = Layout { options, total: root.count.max(1), graph_width, bottom: height - BOTTOM_PAD };
    layout.frame(&mut svg, "all", &root, X_PAD, 0);
    svg.push_str("</svg>\n");
    svg
}

struct Layout<'a> {
    options: &'a FlameOptions,
    total: u64,
    graph_width: f64,
    /// The y coordinate of the bottom of the "all" frame.
    bottom: f64,
}

impl Layout<'_> {
    fn frame(&self, svg: &mut String, name: &str, node: &Node, x: f64, depth: usize) {
        let width = node.count as f64 / self.total as f64 * self.graph_width;
        if width < self.options.min_width {
            return;
        }
        let y = self.bottom - (depth + 1) as f64 * self.options.frame_height;
        let share = node.count as f64 * 100.0 / self.total as f64;
        let info = format!("{name} ({} {}, {share:.2}%)", node.count, self.options.unit);
        let _ = writeln!(
            svg,
            concat!(
                r#"<g class="f" data-x="{x}" data-w="{w}" data-d="{d}" onclick="zoom(this)" "#,
                r#"onmouseover="details(this)" onmouseout="details(null)"><title>{info}</title>"#,
                r#"<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="2" ry="2" fill="{fill}"/>"#,
                r#"<text x="{tx}" y="{ty}">{label}</text></g>"#
            ),
            x = fmt_num(x),
            w = fmt_num(width),
            d = depth,
            info = escape(&info),
            y = fmt_num(y),
            h = fmt_num(self.options.frame_height - 1.0),
            fill = color(name, depth == 0),
            tx = fmt_num(x + 3.0),
            ty = fmt_num(y + self.options.frame_height - 4.5),
            label = escape(&fit(name, width - 6.0)),
        );
        let mut child_x = x;
        for (child_name, child) in &node.children {
            self.frame(svg, child_name, child, child_x, depth + 1);
            child_x += child.count as f64 / self.total as f64 * self.graph_width;
        }
    }
}

/// As much of `name` as fits in `width` pixels, with ".." when cut; empty if not even 3 chars fit.
fn fit(name: &str, width: f64) -> String {
    let fits = (width / CHAR_WIDTH).floor().max(0.0) as usize;
    let chars = name.chars().count();
    if chars <= fits {
        name.to_owned()
    } else if fits < 3 {
        String::new()
    } else {
        let mut cut: String = name.chars().take(fits - 2).collect();
        cut.push_str("..");
        cut
    }
}

/// A warm color derived from the name, so a method has the same color in every graph.
fn color(name: &str, root: bool) -> String {
    if root {
        return "rgb(220,220,220)".into();
    }
    // FNV-1a: stable across runs and platforms, unlike the std hasher.
    let mut hash: u32 = 0x811c_9dc5;
    for byte in name.bytes() {
        hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    let r = 205 + (hash % 50);
    let g = (hash >> 8) % 230;
    let b = (hash >> 16) % 55;
    format!("rgb({r},{g},{b})")
}

/// Numbers with at most two decimals and no trailing zeros, to keep the file small.
fn fmt_num(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_owned() }
}

/// Escapes text for XML content and attribute values; drops characters XML 1.0 forbids.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// Hover details and click-to-zoom. Frames carry their layout in data attributes; zooming maps
/// the chosen frame's span to the full width and fades what lies outside it.
const SCRIPT: &str = r#"
var details_text, frames, full_w, left;
function init(evt) {
  details_text = document.getElementById("details");
  frames = document.getElementsByClassName("f");
  if (frames.length == 0) return;
  left = parseFloat(frames[0].getAttribute("data-x"));
  full_w = parseFloat(frames[0].getAttribute("data-w"));
}
function details(g) {
  details_text.textContent = g ? g.getElementsByTagName("title")[0].textContent : " ";
}
function zoom(target) {
  var zx = parseFloat(target.getAttribute("data-x")), zw = parseFloat(target.getAttribute("data-w"));
  var zd = parseInt(target.getAttribute("data-d"));
  var scale = full_w / zw;
  for (var i = 0; i < frames.length; i++) {
    var g = frames[i], x = parseFloat(g.getAttribute("data-x")), w = parseFloat(g.getAttribute("data-w"));
    var d = parseInt(g.getAttribute("data-d"));
    var rect = g.getElementsByTagName("rect")[0], text = g.getElementsByTagName("text")[0];
    var inside = x >= zx - 0.0001 && x + w <= zx + zw + 0.0001;
    var ancestor = d < zd && x <= zx + 0.0001 && x + w >= zx + zw - 0.0001;
    if (inside || ancestor) {
      var nx = ancestor ? left : left + (x - zx) * scale, nw = ancestor ? full_w : w * scale;
      rect.setAttribute("x", nx); rect.setAttribute("width", nw);
      text.setAttribute("x", nx + 3);
      var name = g.getElementsByTagName("title")[0].textContent.replace(/ \([^(]*\)$/, "");
      var fits = Math.floor((nw - 6) / 7.08);
      text.textContent = name.length <= fits ? name : (fits < 3 ? "" : name.substring(0, fits - 2) + "..");
      g.style.opacity = 1; g.style.display = "";
    } else {
      g.style.display = "none";
    }
  }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(frames: &str, count: u64) -> FoldedStack {
        FoldedStack { frames: frames.split(';').map(str::to_owned).collect(), count }
    }

    /// Every `<g class="f">` frame as (name, x, width, depth), read back with a real XML parser
    /// (which also proves the document is well formed).
    fn frames_of(svg: &str) -> Vec<(String, f64, f64, usize)> {
        use quick_xml::events::Event;
        let mut reader = quick_xml::Reader::from_str(svg);
        let mut frames = Vec::new();
        let mut current: Option<(f64, f64, usize)> = None;
        let mut in_title = false;
        let mut depth = 0i32;
        loop {
            match reader.read_event().expect("well-formed XML") {
                Event::Start(e) => {
                    depth += 1;
                    let attr = |name: &str| {
                        e.try_get_attribute(name).unwrap().map(|a| a.unescape_value().unwrap().into_owned())
                    };
                    if e.name().as_ref() == b"g" {
                        current = Some((
                            attr("data-x").unwrap().parse().unwrap(),
                            attr("data-w").unwrap().parse().unwrap(),
                            attr("data-d").unwrap().parse().unwrap(),
                        ));
                    }
                    in_title = e.name().as_ref() == b"title";
                }
                Event::End(_) => {
                    depth -= 1;
                    in_title = false;
                }
                Event::Text(t) if in_title => {
                    let title = t.unescape().unwrap().into_owned();
                    let name = title.rsplit_once(" (").unwrap().0.to_owned();
                    let (x, w, d) = current.take().unwrap();
                    frames.push((name, x, w, d));
                }
                Event::Eof => break,
                _ => {}
            }
        }
        assert_eq!(depth, 0, "unbalanced elements");
        frames
    }

    #[test]
    fn parses_folded_lines_and_rejects_bad_ones() {
        let stacks = parse_folded("main;a;b 3\n\nmain;c 1\n").unwrap();
        assert_eq!(stacks, vec![stack("main;a;b", 3), stack("main;c", 1)]);
        assert_eq!(parse_folded("main;a").unwrap_err(), FoldedError { line: 1, reason: "no sample count" });
        assert_eq!(
            parse_folded("ok 1\nmain;a x").unwrap_err(),
            FoldedError { line: 2, reason: "sample count is not a number" }
        );
        assert_eq!(parse_folded(&to_folded(&stacks)).unwrap(), stacks);
    }

    #[test]
    fn widths_are_proportional_to_counts_and_children_sit_on_parents() {
        let stacks = [stack("main;hot", 75), stack("main;cold", 25), stack("other", 100)];
        let options = FlameOptions::default();
        let frames = frames_of(&render_svg(&stacks, &options));
        let find = |n: &str| frames.iter().find(|f| f.0 == n).unwrap_or_else(|| panic!("no frame {n}")).clone();
        let full = options.width - 2.0 * X_PAD;
        let (_, all_x, all_w, all_d) = find("all");
        assert_eq!((all_x, all_w, all_d), (X_PAD, full, 0));
        let (_, main_x, main_w, main_d) = find("main");
        let (_, _, other_w, _) = find("other");
        let (_, hot_x, hot_w, hot_d) = find("hot");
        let (_, cold_x, cold_w, _) = find("cold");
        assert_eq!((main_d, hot_d), (1, 2));
        let close = |a: f64, b: f64| (a - b).abs() < 0.011;
        assert!(close(main_w, full * 0.5) && close(other_w, full * 0.5));
        assert!(close(hot_w, full * 0.375) && close(cold_w, full * 0.125));
        assert!(close(hot_w / cold_w, 3.0));
        // Children sorted by name, packed from the parent's left edge.
        assert!(close(cold_x, main_x) && close(hot_x, cold_x + cold_w));
        assert_eq!(frames.len(), 5);
    }

    #[test]
    fn names_are_escaped_and_tiny_frames_left_out() {
        let stacks = [stack("a<b>&\"c';List<String>", 1_000_000), stack("tiny", 1)];
        let svg = render_svg(&stacks, &FlameOptions::default());
        let frames = frames_of(&svg);
        assert!(frames.iter().any(|f| f.0 == "a<b>&\"c'"));
        assert!(frames.iter().any(|f| f.0 == "List<String>"));
        assert!(!frames.iter().any(|f| f.0 == "tiny"), "a frame of 0.001 px was drawn");
        assert!(svg.contains("&lt;String&gt;"));
    }

    #[test]
    fn empty_input_is_a_valid_graph() {
        let frames = frames_of(&render_svg(&[], &FlameOptions::default()));
        assert_eq!(frames.len(), 0);
    }

    #[test]
    fn labels_fit_their_boxes() {
        assert_eq!(fit("java.lang.Thread.run", 1000.0), "java.lang.Thread.run");
        let cut = fit("java.lang.Thread.run", 60.0);
        assert!(cut.ends_with("..") && cut.chars().count() as f64 * CHAR_WIDTH <= 60.0);
        assert_eq!(fit("java.lang.Thread.run", 10.0), "");
    }
}
