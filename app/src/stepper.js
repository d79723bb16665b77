// The stepper (progressive enhancement; the page works without it): "Step by step" opens a
// WebSocket to /api/step, where the server holds a real transaction between two statements.
// At each pause the server sends the pause drawn in the page's language (what is held, the
// tables from inside and from another session, what PostgreSQL reports) and this script only
// swaps it into the panel; the learner's buttons send the next command. When the run ends the
// server keeps its report, and the page's new rendering is brought in. Closing the tab closes
// the socket, which the server treats as the process dying. The few words said between pauses
// come from the page (data-t texts), so this script has no language of its own.
(function () {
  if (!window.WebSocket || !window.FormData) return;
  document.documentElement.classList.add("step-js");
  var socket = null;
  // A command is on its way: further presses wait for its answer.
  var waiting = false;

  function panel() {
    return document.querySelector("[data-stepper]");
  }
  function word(key) {
    var el = panel().querySelector('[data-t="' + key + '"]');
    return el ? el.textContent : key;
  }
  function set(el, text) {
    if (el) el.textContent = text;
  }

  document.addEventListener("click", function (ev) {
    var start = ev.target.closest && ev.target.closest("[data-step-start]");
    if (start) {
      ev.preventDefault();
      begin(start.form, start.getAttribute("data-scenario") || "ticket");
      return;
    }
    var cmd = ev.target.closest && ev.target.closest("[data-stepper] [data-cmd]");
    if (cmd && socket && socket.readyState === 1 && !waiting) {
      var message = { cmd: cmd.getAttribute("data-cmd") };
      if (message.cmd === "commit_reply_lost") {
        message.commit_fate = panel().querySelector("[data-step-fate]").value;
      }
      if (message.cmd === "other_publisher") {
        message.skip_locked = cmd.getAttribute("data-skip-locked") === "true";
      }
      busy(true);
      socket.send(JSON.stringify(message));
    }
  });

  // What "begin" sends: each scenario reads its own form's fields (the consumer its inbox
  // switch), and its predictions.
  function beginCommand(scenario, fields) {
    if (scenario === "publisher") {
      return {
        cmd: "begin",
        scenario: scenario,
        predict_sends: fields.get("predict_sends") || undefined,
        predict_mark: fields.get("predict_mark") || undefined,
      };
    }
    if (scenario === "consumer") {
      return {
        cmd: "begin",
        scenario: scenario,
        inbox: fields.get("inbox") || undefined,
        predict_history: fields.get("predict_history") || undefined,
      };
    }
    return {
      cmd: "begin",
      mode: fields.get("mode") || undefined,
      mistakes: fields.get("mistakes") || undefined,
      event_id: fields.get("event_id") || undefined,
      payload: fields.get("payload") || undefined,
      predict_ticket: fields.get("predict_ticket") || undefined,
      predict_outbox: fields.get("predict_outbox") || undefined,
      predict_kafka: fields.get("predict_kafka") || undefined,
      predict_client: fields.get("predict_client") || undefined,
    };
  }

  function begin(form, scenario) {
    if (!form || !panel() || socket) return;
    var fields = new FormData(form);
    var url = new URL(form.getAttribute("action"), window.location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.pathname = "/api/step";
    // The server draws each pause in the page's own language.
    if (document.documentElement.lang) url.searchParams.set("lang", document.documentElement.lang);
    var p = panel();
    p.hidden = false;
    set(p.querySelector("[data-step-error]"), "");
    set(p.querySelector("[data-step-where]"), word("working"));
    lockPage(true);
    var ws = new WebSocket(url.toString());
    socket = ws;
    var ended = false;
    var paused = false;
    p.setAttribute("data-scenario", scenario);
    ws.onopen = function () {
      ws.send(JSON.stringify(beginCommand(scenario, fields)));
    };
    ws.onmessage = function (ev) {
      var m;
      try {
        m = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      busy(false);
      if (m.pause) {
        set(panel().querySelector("[data-step-error]"), "");
        showPause(m.pause, m.view, !paused);
        paused = true;
      } else if (m.error) {
        set(panel().querySelector("[data-step-error]"), m.error.message);
        if (!paused) {
          // Refused before any pause (a busy sandbox, a limit): nothing is held.
          ended = true;
          set(panel().querySelector("[data-step-where]"), "");
          finish(ws, false);
        }
      } else if (m.report) {
        ended = true;
        set(panel().querySelector("[data-step-where]"), word("finished"));
        finish(ws, true);
      }
    };
    ws.onclose = function () {
      if (socket !== ws) return;
      if (!ended) set(panel().querySelector("[data-step-error]"), word("lost"));
      finish(ws, true);
    };
  }

  function finish(ws, refresh) {
    if (socket === ws) socket = null;
    try {
      ws.close();
    } catch (e) {
      /* already closed */
    }
    lockPage(false);
    busy(false);
    if (refresh && window.__playgroundRefresh) {
      window.__playgroundRefresh().then(function () {
        // The result is where the learner looks next.
        var outcome = document.querySelector(".outcome");
        if (outcome) outcome.scrollIntoView({ block: "nearest" });
      });
    } else {
      var p = panel();
      if (p) p.querySelectorAll("[data-cmd]").forEach(function (b) {
        b.disabled = true;
      });
    }
  }

  // While a transaction is held, the one-shot forms would only meet "step in progress".
  function lockPage(on) {
    document.querySelectorAll("[data-playground] button[type=submit], [data-playground] input[type=submit], [data-step-start]").forEach(function (b) {
      b.disabled = on;
    });
  }

  // Buttons stay enabled (a disabled button would drop keyboard focus); they say they are
  // busy instead, and presses wait.
  function busy(on) {
    waiting = on;
    var p = panel();
    if (!p) return;
    p.setAttribute("aria-busy", on ? "true" : "false");
    p.querySelectorAll("[data-cmd]").forEach(function (b) {
      b.setAttribute("aria-disabled", on ? "true" : "false");
    });
  }

  // The pause's JSON decides which commands apply; its drawing is the server's.
  function showPause(pause, view, moveFocus) {
    var p = panel();
    var scenario = pause.scenario || "ticket";
    set(p.querySelector("[data-step-where]"), view ? view.where : "");
    p.querySelector("[data-step-view]").innerHTML = view ? view.html : "";
    p.setAttribute("data-at", pause.at);
    p.setAttribute("data-scenario", scenario);
    p.querySelector("[data-step-lost]").hidden = scenario !== "ticket" || pause.next !== "commit";
    // A second session once per run, of the kind this scenario has.
    p.querySelectorAll("[data-only]").forEach(function (b) {
      b.hidden = !!pause.waiter || b.getAttribute("data-only") !== scenario;
    });
    markStrip(scenario, pause.at);
    // The first pause moves focus to the panel; later ones keep it on the pressed button.
    if (moveFocus) p.querySelector("#stepper-heading").focus({ preventScroll: true });
    p.scrollIntoView({ block: "nearest" });
  }

  // The held pause on its strip: the ticket function's timeline, or the after-COMMIT strip.
  function markStrip(scenario, at) {
    document.querySelectorAll(".strip [data-held], .after-strip [data-held]").forEach(function (el) {
      el.removeAttribute("data-held");
    });
    // The after-COMMIT strip says which stage runs which scenario (data-runs).
    var mark =
      scenario === "ticket"
        ? document.querySelector('.strip label.mark[data-mark="' + at + '"]')
        : document.querySelector('.after-strip [data-runs="' + scenario + '"] .after-mark[data-mark="' + at + '"]');
    if (mark) mark.setAttribute("data-held", "true");
  }
})();
