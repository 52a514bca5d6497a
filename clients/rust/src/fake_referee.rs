//! An in-process fake referee for the unit tests: `RefereeService.Play` spoken by hand over
//! HTTP/2 (the h2 crate tonic's client already uses), on a TCP port of 127.0.0.1, on its
//! own thread and runtime. Each stream follows a script chosen from its attempt number and
//! the ticket of its Hello; the fake counts the streams opened and keeps their Hellos.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use h2::RecvStream;
use h2::server::SendResponse;
use prost::Message;
use tokio::sync::Notify;
use tonic::Code;

use crate::pb::{self, PlayRequest, PlayResponse, event::Event};

/// One step of a stream's script.
pub enum Step {
    /// Send this response.
    Send(Box<PlayResponse>),
    /// Read a decision; a different one ends the stream with INVALID_ARGUMENT.
    Expect { request_id: u64, action_id: u32 },
    /// End the stream with this status and details (trailers-only if nothing was sent).
    End(Code, String),
    /// Tell whoever waits on this (a stream of another attempt).
    Notify(Arc<Notify>),
    /// Wait until told.
    Wait(Arc<Notify>),
}

/// What a stream does: from its attempt number (1 for the first stream the fake sees) and
/// the ticket of its Hello.
pub type Script = dyn Fn(usize, &str) -> Vec<Step> + Send + Sync;

pub struct FakeReferee {
    /// `host:port`, for `TAVOLO_REFEREE`.
    pub address: String,
    attempts: Arc<AtomicUsize>,
    hellos: Arc<Mutex<Vec<pb::Hello>>>,
}

impl FakeReferee {
    /// How many `Play` streams were opened so far.
    pub fn attempts(&self) -> usize {
        self.attempts.load(Ordering::SeqCst)
    }

    /// The Hello of every stream so far (a default one for a stream that sent none).
    pub fn hellos(&self) -> Vec<pb::Hello> {
        self.hellos.lock().unwrap().clone()
    }
}

/// Starts the fake on a fresh port; it lives until the test process ends.
pub fn serve(script: impl Fn(usize, &str) -> Vec<Step> + Send + Sync + 'static) -> FakeReferee {
    let attempts = Arc::new(AtomicUsize::new(0));
    let counter = attempts.clone();
    let hellos = Arc::new(Mutex::new(Vec::new()));
    let kept = hellos.clone();
    let script: Arc<Script> = Arc::new(script);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().to_string()).unwrap();
            loop {
                let Ok((io, _)) = listener.accept().await else {
                    continue;
                };
                let (script, counter, kept) = (script.clone(), counter.clone(), kept.clone());
                tokio::spawn(async move {
                    let Ok(mut conn) = h2::server::handshake(io).await else {
                        return;
                    };
                    while let Some(Ok((request, respond))) = conn.accept().await {
                        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                        let (script, kept) = (script.clone(), kept.clone());
                        tokio::spawn(async move {
                            play(n, request.into_body(), respond, &*script, &kept).await;
                        });
                    }
                });
            }
        });
    });
    FakeReferee {
        address: rx.recv().unwrap(),
        attempts,
        hellos,
    }
}

/// The request side of a stream: gRPC length-prefixed messages.
struct Reader {
    body: RecvStream,
    buffer: BytesMut,
}

impl Reader {
    async fn next(&mut self) -> Option<PlayRequest> {
        loop {
            if self.buffer.len() >= 5 {
                let length = u32::from_be_bytes(self.buffer[1..5].try_into().unwrap()) as usize;
                if self.buffer.len() >= 5 + length {
                    self.buffer.advance(5);
                    let message = self.buffer.split_to(length);
                    return PlayRequest::decode(message.freeze()).ok();
                }
            }
            let chunk = self.body.data().await?.ok()?;
            let _ = self.body.flow_control().release_capacity(chunk.len());
            self.buffer.extend_from_slice(&chunk);
        }
    }
}

fn frame(response: &PlayResponse) -> Bytes {
    let body = response.encode_to_vec();
    let mut out = BytesMut::with_capacity(5 + body.len());
    out.put_u8(0);
    out.put_u32(body.len() as u32);
    out.put_slice(&body);
    out.freeze()
}

fn status_headers(code: Code, details: &str) -> http::HeaderMap {
    let mut headers = http::HeaderMap::new();
    headers.insert("grpc-status", (code as i32).to_string().parse().unwrap());
    // Printable ASCII but '%' goes as it is (gRPC's percent-encoding of grpc-message).
    headers.insert("grpc-message", details.parse().unwrap());
    headers
}

async fn play(
    n: usize,
    body: RecvStream,
    mut respond: SendResponse<Bytes>,
    script: &Script,
    hellos: &Mutex<Vec<pb::Hello>>,
) {
    let mut reader = Reader {
        body,
        buffer: BytesMut::new(),
    };
    let hello = match reader.next().await.and_then(|m| m.message) {
        Some(pb::play_request::Message::Hello(hello)) => hello,
        _ => pb::Hello::default(),
    };
    let ticket = hello.ticket.clone();
    hellos.lock().unwrap().push(hello);
    let mut sending: Option<h2::SendStream<Bytes>> = None;
    let ok_headers = || {
        http::Response::builder()
            .status(200)
            .header("content-type", "application/grpc")
            .body(())
            .unwrap()
    };
    let mut end = (Code::Ok, String::new());
    for step in script(n, &ticket) {
        match step {
            Step::Send(response) => {
                if sending.is_none() {
                    match respond.send_response(ok_headers(), false) {
                        Ok(stream) => sending = Some(stream),
                        Err(_) => return,
                    }
                }
                if sending
                    .as_mut()
                    .unwrap()
                    .send_data(frame(&response), false)
                    .is_err()
                {
                    return;
                }
            }
            Step::Expect {
                request_id,
                action_id,
            } => {
                let decision = match reader.next().await.and_then(|m| m.message) {
                    Some(pb::play_request::Message::Decision(d)) => Some(d),
                    _ => None,
                };
                if decision.is_none_or(|d| d.request_id != request_id || d.action_id != action_id) {
                    end = (Code::InvalidArgument, "bad_decision: not the answer".into());
                    break;
                }
            }
            Step::End(code, details) => {
                end = (code, details);
                break;
            }
            Step::Notify(notify) => notify.notify_one(),
            Step::Wait(notify) => notify.notified().await,
        }
    }
    let trailers = status_headers(end.0, &end.1);
    match sending {
        Some(mut stream) => {
            let _ = stream.send_trailers(trailers);
        }
        None => {
            // Trailers-only: the status in the response headers, and no body.
            let mut response = ok_headers();
            response.headers_mut().extend(trailers);
            let _ = respond.send_response(response, true);
        }
    }
    // Keep the request side open until the client goes, as a server would.
    while reader.next().await.is_some() {}
}

/// A response holding these events and no request.
pub fn events(events: Vec<Event>) -> PlayResponse {
    PlayResponse {
        events: events
            .into_iter()
            .map(|e| pb::Event { event: Some(e) })
            .collect(),
        request: None,
    }
}

/// The Welcome of a stream (its match id is the ticket, for the tests to check).
pub fn welcome(ticket: &str) -> Step {
    Step::Send(Box::new(events(vec![Event::Welcome(pb::Welcome {
        match_id: ticket.to_string(),
        slot: 0,
    })])))
}

/// The request every scripted match sends: id 5, one legal play, id 17, with an event of a
/// kind this SDK does not know.
pub fn request() -> Step {
    let request = pb::DecisionRequest {
        request_id: 5,
        deadline_ms: 1000,
        legal_actions: vec![pb::Action {
            id: 17,
            kind: pb::ActionKind::Play as i32,
            card: "6C".into(),
            text: "6C".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    Step::Send(Box::new(PlayResponse {
        events: vec![pb::Event { event: None }],
        request: Some(request),
    }))
}

/// Read the answer to [`request`].
pub fn expect_answer() -> Step {
    Step::Expect {
        request_id: 5,
        action_id: 17,
    }
}

/// KeyAccepted, as the referee sends it first on a key's stream.
pub fn key_accepted() -> Step {
    Step::Send(Box::new(events(vec![Event::KeyAccepted(
        pb::KeyAccepted {
            entrant: "alice".into(),
            streams_per_table: 2,
            matches_left: 2,
        },
    )])))
}

/// A Welcome seating a key's stream at `slot` of `match_id`.
pub fn welcome_to(match_id: &str, slot: u32) -> Step {
    Step::Send(Box::new(events(vec![Event::Welcome(pb::Welcome {
        match_id: match_id.into(),
        slot,
    })])))
}

pub fn match_over(match_id: &str) -> Step {
    Step::Send(Box::new(events(vec![Event::MatchOver(pb::MatchOver {
        match_id: match_id.into(),
    })])))
}

/// A key's match of one request: Welcome, [`request`], its answer, MatchOver.
pub fn key_match(match_id: &str, slot: u32) -> Vec<Step> {
    vec![
        welcome_to(match_id, slot),
        request(),
        expect_answer(),
        match_over(match_id),
    ]
}

/// A whole match of one request (id 5, one legal play, id 17) answered 17, then MatchOver.
pub fn one_request_match(ticket: &str) -> Vec<Step> {
    let request = pb::DecisionRequest {
        request_id: 5,
        deadline_ms: 1000,
        legal_actions: vec![pb::Action {
            id: 17,
            kind: pb::ActionKind::Play as i32,
            card: "6C".into(),
            text: "6C".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    vec![
        welcome(ticket),
        Step::Send(Box::new(PlayResponse {
            events: vec![],
            request: Some(request),
        })),
        Step::Expect {
            request_id: 5,
            action_id: 17,
        },
        Step::Send(Box::new(events(vec![Event::MatchOver(pb::MatchOver {
            match_id: ticket.to_string(),
        })]))),
        Step::End(Code::Ok, String::new()),
    ]
}
