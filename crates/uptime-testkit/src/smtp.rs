//! A real SMTP server on loopback for tests: it speaks enough of RFC 5321
//! (HELO/EHLO, MAIL FROM, RCPT TO, DATA, RSET, NOOP, QUIT) for an ordinary
//! client such as lettre, and keeps every message it accepts, envelope and
//! raw data, for assertions. No TLS and no authentication.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::JoinSet;

/// One accepted message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedMail {
    /// The `MAIL FROM` address, without angle brackets.
    pub mail_from: String,
    /// The `RCPT TO` addresses, without angle brackets.
    pub rcpt_to: Vec<String>,
    /// The message as sent after `DATA`: headers and body, dot-unstuffed,
    /// CRLF line ends, without the final `.` line.
    pub data: String,
}

impl ReceivedMail {
    /// The value of the first header named `name` (case-insensitive), with
    /// folded continuation lines joined.
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.data.split("\r\n\r\n").next()?;
        let mut found: Option<String> = None;
        for line in head.split("\r\n") {
            if let Some(value) = found.as_mut() {
                if line.starts_with([' ', '\t']) {
                    value.push_str(line);
                    continue;
                }
                break;
            }
            if let Some((key, value)) = line.split_once(':') {
                if key.eq_ignore_ascii_case(name) {
                    found = Some(value.trim().to_string());
                }
            }
        }
        found
    }

    /// Everything after the header block, as sent.
    pub fn body(&self) -> &str {
        self.data
            .split_once("\r\n\r\n")
            .map(|(_, body)| body)
            .unwrap_or("")
    }

    /// The body as text: quoted-printable decoded when the message says it
    /// is encoded that way (clients pick it for long lines), as sent otherwise.
    pub fn text_body(&self) -> String {
        let quoted_printable = self
            .header("content-transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("quoted-printable"));
        if quoted_printable {
            decode_quoted_printable(self.body())
        } else {
            self.body().to_string()
        }
    }
}

#[derive(Default)]
struct Mailbox {
    mails: Mutex<Vec<ReceivedMail>>,
    arrived: Notify,
}

/// A running SMTP server; it stops (with its connections) when dropped.
pub struct SmtpServer {
    port: u16,
    mailbox: Arc<Mailbox>,
    _tasks: JoinSet<()>,
}

impl SmtpServer {
    /// Listens on `127.0.0.1` on a free port.
    pub async fn start() -> Self {
        Self::start_on(0).await.expect("bind the test SMTP server")
    }

    /// Listens on `127.0.0.1:port` (0: a free one), for a stack that is told
    /// where its relay is before this starts (the soak's `scripts/up.sh`).
    pub async fn start_on(port: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let port = listener.local_addr()?.port();
        let mailbox = Arc::new(Mailbox::default());
        let mut tasks = JoinSet::new();
        let accepted = mailbox.clone();
        tasks.spawn(async move {
            // Connections live in this set, so they end with the server.
            let mut connections = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                connections.spawn(serve(stream, accepted.clone()));
            }
        });
        Ok(Self {
            port,
            mailbox,
            _tasks: tasks,
        })
    }

    pub fn host(&self) -> &'static str {
        "127.0.0.1"
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Every message accepted so far, oldest first.
    pub fn received(&self) -> Vec<ReceivedMail> {
        self.mailbox.mails.lock().expect("mailbox lock").clone()
    }

    /// Waits until at least `count` messages have arrived (panics after
    /// `deadline`) and returns all of them.
    pub async fn wait_for(&self, count: usize, deadline: Duration) -> Vec<ReceivedMail> {
        let waiting = async {
            loop {
                let notified = self.mailbox.arrived.notified();
                let mails = self.received();
                if mails.len() >= count {
                    return mails;
                }
                notified.await;
            }
        };
        tokio::time::timeout(deadline, waiting)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "expected {count} email(s) within {deadline:?}, got {}: {:?}",
                    self.received().len(),
                    self.received()
                )
            })
    }
}

fn decode_quoted_printable(encoded: &str) -> String {
    let joined = encoded.replace("=\r\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'=', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The address inside `FROM:<a@b> PARAMS` or `TO:<a@b>`.
fn envelope_address(arg: &str) -> String {
    let arg = arg.split_once(':').map(|(_, a)| a).unwrap_or(arg).trim();
    match (arg.find('<'), arg.find('>')) {
        (Some(start), Some(end)) if start < end => arg[start + 1..end].to_string(),
        _ => arg.split_whitespace().next().unwrap_or("").to_string(),
    }
}

async fn serve(stream: TcpStream, mailbox: Arc<Mailbox>) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    if write
        .write_all(b"220 localhost uptime-testkit SMTP ready\r\n")
        .await
        .is_err()
    {
        return;
    }
    let mut mail_from: Option<String> = None;
    let mut rcpt_to: Vec<String> = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        match lines.read_line(&mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let command = line.trim_end_matches(['\r', '\n']);
        let (verb, arg) = command.split_once(' ').unwrap_or((command, ""));
        let answer: &str = match verb.to_ascii_uppercase().as_str() {
            "EHLO" => "250-localhost greets you\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n",
            "HELO" => "250 localhost\r\n",
            "MAIL" => {
                mail_from = Some(envelope_address(arg));
                rcpt_to.clear();
                "250 OK\r\n"
            }
            "RCPT" if mail_from.is_some() => {
                rcpt_to.push(envelope_address(arg));
                "250 OK\r\n"
            }
            "RCPT" => "503 MAIL first\r\n",
            "DATA" if mail_from.is_some() && !rcpt_to.is_empty() => {
                if write
                    .write_all(b"354 End data with <CR><LF>.<CR><LF>\r\n")
                    .await
                    .is_err()
                {
                    return;
                }
                let Some(data) = read_data(&mut lines).await else {
                    return;
                };
                mailbox
                    .mails
                    .lock()
                    .expect("mailbox lock")
                    .push(ReceivedMail {
                        mail_from: mail_from.take().unwrap_or_default(),
                        rcpt_to: std::mem::take(&mut rcpt_to),
                        data,
                    });
                mailbox.arrived.notify_waiters();
                "250 OK queued\r\n"
            }
            "DATA" => "503 need MAIL and RCPT first\r\n",
            "RSET" => {
                mail_from = None;
                rcpt_to.clear();
                "250 OK\r\n"
            }
            "NOOP" => "250 OK\r\n",
            "QUIT" => {
                let _ = write.write_all(b"221 Bye\r\n").await;
                return;
            }
            _ => "502 command not implemented\r\n",
        };
        if write.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Reads the message after `354` up to the `.` line; `None` if the client
/// hung up first.
async fn read_data<R: AsyncBufReadExt + Unpin>(lines: &mut R) -> Option<String> {
    let mut data = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let content = line.trim_end_matches(['\r', '\n']);
        if content == "." {
            return Some(data);
        }
        // Dot-stuffing: a leading `.` was doubled by the client.
        let content = content.strip_prefix('.').unwrap_or(content);
        data.push_str(content);
        data.push_str("\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_addresses_lose_brackets_and_parameters() {
        assert_eq!(envelope_address("FROM:<a@b.c> BODY=8BITMIME"), "a@b.c");
        assert_eq!(envelope_address("TO:<x@y>"), "x@y");
        assert_eq!(envelope_address("FROM: a@b"), "a@b");
    }

    #[test]
    fn headers_are_found_case_insensitively_and_unfolded() {
        let mail = ReceivedMail {
            mail_from: String::new(),
            rcpt_to: vec![],
            data: "Subject: [DOWN] a\r\n very long\r\nTo: x@y\r\n\r\nbody\r\n".into(),
        };
        assert_eq!(mail.header("subject").unwrap(), "[DOWN] a very long");
        assert_eq!(mail.header("TO").unwrap(), "x@y");
        assert_eq!(mail.body(), "body\r\n");
    }

    #[test]
    fn quoted_printable_bodies_are_decoded() {
        assert_eq!(
            decode_quoted_printable("a long=\r\n line =3D x =C3=A9\r\n"),
            "a long line = x \u{e9}\r\n"
        );
    }
}
