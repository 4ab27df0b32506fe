//! DAP's base protocol framing, sans I/O: `Content-Length: N\r\n` headers, an empty line, then N
//! bytes of JSON. [`Decoder`] takes bytes as they arrive and yields whole bodies or a
//! [`FrameError`]; after an error it skips to the next header block, so one bad message does not
//! end the session. [`encode`] frames an outgoing body.

/// Bodies larger than this are refused (and skipped), so a lying length cannot make us buffer
/// without bound.
pub const MAX_BODY: usize = 64 << 20;

/// Headers longer than this without their closing empty line are an error.
const MAX_HEADER: usize = 8 << 10;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The header block has no `Content-Length`.
    MissingLength,
    /// `Content-Length` is not a non-negative integer.
    BadLength(String),
    /// `Content-Length` is over [`MAX_BODY`].
    TooLarge(usize),
    /// A header block with no end within [`MAX_HEADER`] bytes.
    HeaderTooLong,
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::MissingLength => write!(f, "a message header without Content-Length"),
            FrameError::BadLength(v) => write!(f, "a bad Content-Length: {v:?}"),
            FrameError::TooLarge(n) => write!(f, "a Content-Length of {n} bytes, over the limit of {MAX_BODY}"),
            FrameError::HeaderTooLong => write!(f, "a message header over {MAX_HEADER} bytes"),
        }
    }
}

impl std::error::Error for FrameError {}

/// Incremental decoder of framed messages.
#[derive(Default)]
pub struct Decoder {
    buf: Vec<u8>,
    /// The body length of the message whose header was read, while its body is awaited.
    body_len: Option<usize>,
    /// Bytes of a refused body still to be dropped.
    skip: usize,
}

impl Decoder {
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete body, an error for a bad header, or `None` until more bytes arrive.
    pub fn next_frame(&mut self) -> Option<Result<Vec<u8>, FrameError>> {
        if self.skip > 0 {
            let n = self.skip.min(self.buf.len());
            self.buf.drain(..n);
            self.skip -= n;
            if self.skip > 0 {
                return None;
            }
        }
        if self.body_len.is_none() {
            // Tolerate stray line breaks between messages.
            let lead = self.buf.iter().take_while(|b| **b == b'\r' || **b == b'\n').count();
            self.buf.drain(..lead);
            let Some(end) = find(&self.buf, b"\r\n\r\n") else {
                if self.buf.len() > MAX_HEADER {
                    self.buf.clear();
                    return Some(Err(FrameError::HeaderTooLong));
                }
                return None;
            };
            let header = String::from_utf8_lossy(&self.buf[..end]).into_owned();
            self.buf.drain(..end + 4);
            match parse_length(&header) {
                Ok(n) if n > MAX_BODY => {
                    self.skip = n;
                    return Some(Err(FrameError::TooLarge(n)));
                }
                Ok(n) => self.body_len = Some(n),
                Err(e) => return Some(Err(e)),
            }
        }
        let n = self.body_len?;
        if self.buf.len() < n {
            return None;
        }
        self.body_len = None;
        Some(Ok(self.buf.drain(..n).collect()))
    }
}

fn parse_length(header: &str) -> Result<usize, FrameError> {
    let mut length = None;
    for line in header.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else { continue };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            length = Some(value.parse::<usize>().map_err(|_| FrameError::BadLength(value.to_string()))?);
        }
    }
    length.ok_or(FrameError::MissingLength)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A body with its header.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(d: &mut Decoder) -> Vec<Result<Vec<u8>, FrameError>> {
        std::iter::from_fn(|| d.next_frame()).collect()
    }

    #[test]
    fn whole_and_split_messages() {
        let mut d = Decoder::new();
        let mut bytes = encode(b"{\"a\":1}");
        bytes.extend(encode(b"{}"));
        for chunk in bytes.chunks(3) {
            d.push(chunk);
        }
        assert_eq!(all(&mut d), vec![Ok(b"{\"a\":1}".to_vec()), Ok(b"{}".to_vec())]);
        // Byte by byte, nothing comes before the last byte.
        let one = encode(b"[1,2]");
        for (i, b) in one.iter().enumerate() {
            d.push(&[*b]);
            let got = d.next_frame();
            if i + 1 < one.len() {
                assert_eq!(got, None, "at byte {i}");
            } else {
                assert_eq!(got, Some(Ok(b"[1,2]".to_vec())));
            }
        }
    }

    #[test]
    fn other_headers_and_case_are_accepted() {
        let mut d = Decoder::new();
        d.push(b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}");
        assert_eq!(all(&mut d), vec![Ok(b"{}".to_vec())]);
    }

    #[test]
    fn bad_headers_are_errors_and_the_next_message_still_decodes() {
        let mut d = Decoder::new();
        d.push(b"Content-Length: twelve\r\n\r\n");
        d.push(b"X-Other: 1\r\n\r\n");
        d.push(b"Content-Length: -3\r\n\r\n");
        d.push(&encode(b"{}"));
        assert_eq!(
            all(&mut d),
            vec![
                Err(FrameError::BadLength("twelve".into())),
                Err(FrameError::MissingLength),
                Err(FrameError::BadLength("-3".into())),
                Ok(b"{}".to_vec())
            ]
        );
    }

    #[test]
    fn a_huge_length_is_refused_and_its_body_skipped() {
        let mut d = Decoder::new();
        d.push(format!("Content-Length: {}\r\n\r\n", MAX_BODY + 1).as_bytes());
        assert_eq!(d.next_frame(), Some(Err(FrameError::TooLarge(MAX_BODY + 1))));
        d.push(&vec![b'x'; MAX_BODY + 1]);
        d.push(&encode(b"{}"));
        assert_eq!(all(&mut d), vec![Ok(b"{}".to_vec())]);
    }

    #[test]
    fn endless_header_is_an_error() {
        let mut d = Decoder::new();
        d.push(&vec![b'a'; MAX_HEADER + 1]);
        assert_eq!(d.next_frame(), Some(Err(FrameError::HeaderTooLong)));
        d.push(&encode(b"1"));
        assert_eq!(all(&mut d), vec![Ok(b"1".to_vec())]);
    }
}
