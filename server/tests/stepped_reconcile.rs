//! Every way a stepped run can end, from every starting state, then reconciliation: the
//! reconciliation's report must match the model (it judges the stepped attempt it kept).

mod common;

use common::post;
use common::socket::{Socket, config, pauses_of, serve};
use outbox_lab::catalog::{CrashPoint, Mode};
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn reconciling_any_stepped_run_matches_the_model(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, app) = serve(opts.clone(), config()).await;
    let mut s = Socket::open(addr, None).await;
    let cookie = s.cookie.clone();
    let mut mismatches = Vec::new();
    for pre in 0..3 {
        for mode in [Mode::Outbox, Mode::Naive, Mode::NaivePublishFirst] {
            for end in pauses_of(mode).into_iter().map(Some).chain([None]) {
                for writer in [false, true] {
                    post(&app, "/api/reset", "", &[("cookie", &cookie)]).await;
                    if pre >= 1 {
                        post(&app, "/api/attempt", "", &[("cookie", &cookie)]).await;
                    }
                    if pre >= 2 {
                        post(&app, "/api/reopen", "", &[("cookie", &cookie)]).await;
                    }
                    let mut pause = s.begin(mode).await;
                    let mut sent_writer = false;
                    let report = loop {
                        if writer && !sent_writer && pause["at"] != "after_begin" {
                            sent_writer = true;
                            s.send(json!({"cmd": "other_writer"})).await;
                            pause = s.pause().await;
                        }
                        let here = pause["at"].as_str().unwrap().to_owned();
                        if end.map(CrashPoint::id) == Some(here.as_str()) {
                            s.send(json!({"cmd": "crash"})).await;
                        } else {
                            s.send(json!({"cmd": "next"})).await;
                        }
                        let m = s.recv().await;
                        if let Some(r) = m.get("report") {
                            break r.clone();
                        }
                        pause = m["pause"].clone();
                        assert!(!pause.is_null(), "{m}");
                    };
                    let r = post(&app, "/api/reconcile", "", &[("cookie", &cookie)]).await;
                    assert!(!r.status.is_server_error(), "{}", r.json);
                    if r.status.is_success() && r.json["matches_model"] != true {
                        mismatches.push(format!(
                            "pre {pre} {mode} end {end:?} writer {writer}: run {} -> reconcile {} {}",
                            report["outcome"], r.json["outcome"], r.json["reconciliation"]
                        ));
                    }
                }
            }
        }
    }
    // A lost COMMIT reply at the pause before COMMIT, both fates, from every start.
    for pre in 0..3 {
        for fate in ["applied", "not_applied"] {
            post(&app, "/api/reset", "", &[("cookie", &cookie)]).await;
            if pre >= 1 {
                post(&app, "/api/attempt", "", &[("cookie", &cookie)]).await;
            }
            if pre >= 2 {
                post(&app, "/api/reopen", "", &[("cookie", &cookie)]).await;
            }
            let mut m = json!({"pause": s.begin(Mode::Outbox).await});
            while m.get("pause").is_some() {
                let at = m["pause"]["at"].clone();
                if at == "after_insert" {
                    s.send(json!({"cmd": "commit_reply_lost", "commit_fate": fate}))
                        .await;
                } else {
                    s.send(json!({"cmd": "next"})).await;
                }
                m = s.recv().await;
            }
            let r = post(&app, "/api/reconcile", "", &[("cookie", &cookie)]).await;
            assert!(!r.status.is_server_error(), "{}", r.json);
            if r.status.is_success() && r.json["matches_model"] != true {
                mismatches.push(format!(
                    "pre {pre} lost reply {fate}: run {} -> reconcile {} {}",
                    m["report"]["outcome"], r.json["outcome"], r.json["reconciliation"]
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
