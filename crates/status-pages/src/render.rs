//! Rendering: pages (HTML), badges (SVG, shields JSON), and [`Rendered`],
//! a response body made once per change with its ETag and its gzip and
//! brotli forms, so that serving it is a lookup and a reference count.

pub mod badge;
pub mod feed;
pub mod page;

use bytes::Bytes;
use sha2::{Digest, Sha256};
use std::io::Write;

/// Text for HTML and XML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// The content codings a body is served in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
    Brotli,
}

/// A response body in every encoding a client may take.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub content_type: &'static str,
    /// A strong validator: a digest of the identity body.
    pub etag: String,
    pub identity: Bytes,
    pub gzip: Bytes,
    pub brotli: Bytes,
    /// The gzip and brotli bodies' own strong validators: each encoding is
    /// another representation, with other bytes (RFC 9110 8.8.3), so a
    /// cache must never take one for the other.
    etag_gzip: String,
    etag_brotli: String,
}

impl Rendered {
    /// The ETag `body` will have (to reuse an earlier rendering without
    /// compressing again).
    pub fn etag_of(body: &[u8]) -> String {
        let digest = Sha256::digest(body);
        format!("\"{}\"", hex::encode(&digest[..12]))
    }

    /// The validator of the body in `encoding`.
    pub fn etag_for(&self, encoding: Encoding) -> &str {
        match encoding {
            Encoding::Identity => &self.etag,
            Encoding::Gzip => &self.etag_gzip,
            Encoding::Brotli => &self.etag_brotli,
        }
    }

    /// The body in `encoding`.
    pub fn body(&self, encoding: Encoding) -> Bytes {
        match encoding {
            Encoding::Identity => self.identity.clone(),
            Encoding::Gzip => self.gzip.clone(),
            Encoding::Brotli => self.brotli.clone(),
        }
    }

    pub fn new(content_type: &'static str, body: String) -> Self {
        let etag = Self::etag_of(body.as_bytes());
        // `"<digest>-gzip"`: the identity tag with the coding inside its quotes.
        let tagged = |coding: &str| format!("{}-{coding}\"", etag.trim_end_matches('"'));
        let (etag_gzip, etag_brotli) = (tagged("gzip"), tagged("br"));
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
        let gzip = match gzip.write_all(body.as_bytes()).and_then(|_| gzip.finish()) {
            Ok(bytes) => Bytes::from(bytes),
            Err(_) => Bytes::new(),
        };
        let mut brotli = Vec::new();
        {
            let mut writer = brotli::CompressorWriter::new(&mut brotli, 4096, 7, 22);
            let _ = writer.write_all(body.as_bytes());
        }
        Self {
            content_type,
            etag,
            identity: Bytes::from(body),
            gzip,
            brotli: Bytes::from(brotli),
            etag_gzip,
            etag_brotli,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn both_encodings_give_the_body_back() {
        let body = "<p>hello</p>".repeat(100);
        let rendered = Rendered::new("text/html", body.clone());
        let mut out = String::new();
        flate2::read::GzDecoder::new(&rendered.gzip[..])
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, body);
        let mut out = String::new();
        brotli::Decompressor::new(&rendered.brotli[..], 4096)
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, body);
        assert_eq!(rendered.etag, Rendered::etag_of(body.as_bytes()));
        assert!(rendered.brotli.len() < body.len() / 4);
    }

    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
