//! Exec over WebSocket (`v5.channel.k8s.io`, `v4.channel.k8s.io`): runs the command in the
//! twin's interpreter and answers on the stdout/stderr channels, then the status channel.

use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};

use super::handlers::error_response;
use super::routes::Query;
use super::server::{Body, full};
use crate::sim::kube::controllers::node_monitoring;
use crate::sim::kube::programs::{Context, Output};
use crate::sim::kube::storage::state::KubeState;
use crate::sim::kube::storage::status::ApiError;
use crate::sim::twin::Twin;

const PROTOCOLS: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

pub(crate) fn handle(
    twin: &Arc<Twin>,
    mut request: Request<Incoming>,
    namespace: &str,
    pod_name: &str,
    query: &Query,
) -> Response<Body> {
    let command: Vec<String> = query.all("command").to_vec();
    let outcome = twin.read_kube(|state| run(state, namespace, pod_name, &command, query));
    let Ran {
        output,
        node,
        privileged,
    } = match outcome {
        Ok(ran) => ran,
        Err(error) => return error_response(&error),
    };
    // What a command that injects a fault wrote is kept on the pod's node.
    if output.exit_code == 0
        && let (Some(injection), Some(node)) = (crate::sim::gpu::injected::parse(&command), node)
    {
        twin.kube(|state| node_monitoring::injected(state, &node, privileged, &injection));
    }
    // kubectl copies each channel in a goroutine of its own and ends on the status frame, so
    // it needs the pause below; runbook's client reads the frames in order and does not.
    let pause = request
        .headers()
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|agent| agent.starts_with("kubectl"));
    let (protocol, key) = match handshake(&request) {
        Ok(accepted) => accepted,
        Err(error) => return error_response(&error),
    };
    // A diagnostic answers when its run ends on the twin's clock, parked there from now on
    // (before the upgrade is answered, so a client sees it waiting as soon as it is sent);
    // one that hangs stays parked until its caller hangs up.
    let (mut ends, mut hangs) = (None, None);
    if crate::sim::gpu::programs::holds_its_exec(&command) {
        match output.duration {
            Some(d) if !d.is_zero() => ends = Some(twin.clock.park_until(twin.clock_now() + d)),
            Some(_) => {}
            None => hangs = Some(twin.clock.park_forever()),
        }
    }
    let upgrade = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        let _hangs = hangs;
        if let Some(ends) = ends {
            ends.await;
        }
        let Ok(upgraded) = upgrade.await else { return };
        let socket =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
        answer(socket, &output, &command, pause).await;
    });
    Response::builder()
        .status(101)
        .header("connection", "Upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-accept", key)
        .header("sec-websocket-protocol", protocol)
        .body(full(""))
        .expect("static headers are valid")
}

/// What an exec did, and where: the pod's node and whether its container is privileged.
struct Ran {
    output: Output,
    node: Option<String>,
    privileged: bool,
}

/// Runs the command in the pod's container (the one the query names, else its first), or
/// the apiserver's error when there is no such pod, container or command, or it is not
/// running.
fn run(
    state: &KubeState,
    namespace: &str,
    pod_name: &str,
    command: &[String],
    query: &Query,
) -> Result<Ran, ApiError> {
    let pods = state.built_in("pods");
    let pod = state
        .object_ref("pods", namespace, pod_name)
        .ok_or_else(|| ApiError::not_found(&pods, pod_name))?;
    if command.is_empty() {
        return Err(ApiError::bad_request("you must specify at least 1 command"));
    }
    let mut containers = pod["spec"]["containers"].as_array().into_iter().flatten();
    let container = match query.get("container") {
        Some(name) => containers.find(|c| c["name"] == name).ok_or_else(|| {
            ApiError::bad_request(format!("container {name} is not valid for pod {pod_name}"))
        })?,
        None => containers
            .next()
            .ok_or_else(|| ApiError::bad_request("the pod has no containers"))?,
    };
    if pod["status"]["phase"] != "Running" {
        return Err(ApiError::bad_request(format!(
            "unable to upgrade connection: container not found (\"{}\")",
            container["name"].as_str().unwrap_or_default()
        )));
    }
    let node = pod["spec"]["nodeName"]
        .as_str()
        .and_then(|n| state.object_ref("nodes", "", n));
    let context = Context {
        pod,
        container,
        node,
    };
    Ok(Ran {
        output: (state.exec)(command, &context, state),
        node: pod["spec"]["nodeName"].as_str().map(str::to_string),
        privileged: crate::sim::gpu::programs::privileged(container),
    })
}

/// The WebSocket subprotocol the client offers that the twin speaks, and the
/// `Sec-WebSocket-Accept` answering its key.
fn handshake(request: &Request<Incoming>) -> Result<(&'static str, String), ApiError> {
    let offered = request
        .headers()
        .get("sec-websocket-protocol")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let protocol = PROTOCOLS
        .iter()
        .find(|p| offered.split(',').any(|o| o.trim() == **p))
        .ok_or_else(|| {
            ApiError::bad_request(
                "the twin serves exec over WebSocket (v5.channel.k8s.io or v4.channel.k8s.io); SPDY is not supported",
            )
        })?;
    let key = request
        .headers()
        .get("sec-websocket-key")
        .map(|k| derive_accept_key(k.as_bytes()))
        .ok_or_else(|| ApiError::bad_request("missing Sec-WebSocket-Key"))?;
    Ok((protocol, key))
}

type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// Sends the output on its channels, then the status (after a pause when `pause`), and
/// closes; a command that never ends answers nothing until its caller gives up and hangs up.
async fn answer(mut socket: Socket, output: &Output, command: &[String], pause: bool) {
    if output.duration.is_none() {
        while let Some(Ok(message)) = socket.next().await {
            if message.is_close() {
                break;
            }
        }
        return;
    }
    let frames = frames(output, command);
    let last = frames.len() - 1;
    for (n, frame) in frames.into_iter().enumerate() {
        // The status after a pause, as a real process's exit follows its last output: once,
        // on a loaded machine, kubectl 1.32 printed none of an output sent back to back with
        // its status (tests/integration/kubectl.rs). The pause is 2-3 ms of wall time per
        // exec, which runbook's own client, reading in order, was paying for nothing (a
        // 64-node health check makes some 300 execs, one after another on the virtual clock).
        if pause && n == last && last > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        if socket.send(Message::binary(frame)).await.is_err() {
            return;
        }
    }
    let normal = CloseFrame {
        code: CloseCode::Normal,
        reason: "".into(),
    };
    let _ = socket.close(Some(normal)).await;
}

/// Channel 1 stdout and 2 stderr (when not empty), then 3 the status.
fn frames(output: &Output, command: &[String]) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    for (channel, data) in [
        (1u8, output.stdout.as_bytes()),
        (2u8, output.stderr.as_bytes()),
    ] {
        if !data.is_empty() {
            let mut frame = vec![channel];
            frame.extend_from_slice(data);
            frames.push(frame);
        }
    }
    let status = if output.exit_code == 0 {
        json!({"metadata": {}, "status": "Success"})
    } else {
        json!({
            "metadata": {},
            "status": "Failure",
            "message": format!("command terminated with non-zero exit code: error executing command [{}], exit code {}", command.join(" "), output.exit_code),
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": output.exit_code.to_string()}]},
        })
    };
    let mut status_frame = vec![3u8];
    status_frame.extend_from_slice(status.to_string().as_bytes());
    frames.push(status_frame);
    frames
}
