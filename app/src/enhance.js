// Progressive enhancement for the playground's forms (the page works without it).
// A form inside [data-playground] is posted in the background exactly as the browser would
// post it; the server function answers with a redirect back to the page, and the page's new
// server rendering is swapped in. Scroll position, keyboard focus and the live regions stay,
// so a screen reader hears the news and the learner keeps their place.
// The framework starts hydrating the controls from requestIdleCallback, which has no deadline:
// in a course page's frame Chromium was seen never to call it (7 of 12 loads, 40 s). Idle, but
// not forever: without a deadline of its own, a callback gets one. This runs while the page is
// parsed, before the deferred hydration script asks.
(function () {
  var idle = window.requestIdleCallback;
  if (!idle) return;
  window.requestIdleCallback = function (callback, options) {
    return idle.call(window, callback, options || { timeout: 1500 });
  };
})();

(function () {
  if (!window.fetch || !window.DOMParser || !window.FormData || !window.URLSearchParams) return;
  var running = false;

  // A link to a folded panel's heading unfolds the panel first.
  document.addEventListener("click", function (ev) {
    var link = ev.target.closest && ev.target.closest('a[href^="#"]');
    if (!link) return;
    var target = document.getElementById(link.getAttribute("href").slice(1));
    var fold = target && target.closest("details");
    if (fold) fold.open = true;
  });

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    var root = form.closest && form.closest("[data-playground]");
    if (!root || ev.defaultPrevented || form.method.toLowerCase() !== "post") return;
    // A form whose answer is another page (sharing a run) goes there as the browser would.
    if (form.hasAttribute("data-leave")) return;
    ev.preventDefault();
    if (running) return;
    running = true;
    var focus = focusKey(root);
    var buttons = showBusy(root, form);
    var body = new URLSearchParams(new FormData(form));
    fetch(form.action, {
      method: "POST",
      body: body,
      headers: { Accept: "text/html" },
      credentials: "same-origin",
    })
      .then(function (resp) {
        return resp.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("[data-playground]");
        // Not the page (a proxy's error page, say): show whatever the server has now.
        if (!fresh) throw new Error("no playground in the answer");
        swap(root, fresh);
        restoreFocus(root, focus);
        if (form.classList.contains("after-form")) revealOutcome(root);
      })
      .catch(function () {
        window.location.reload();
      })
      .then(function () {
        running = false;
        clearBusy(buttons);
      });
  });

  // Brings in the server's current page without a reload (the stepper calls this when its
  // run has ended and the report is kept).
  window.__playgroundRefresh = function () {
    var root = document.querySelector("[data-playground]");
    if (!root) return Promise.resolve();
    return fetch(window.location.href, {
      headers: { Accept: "text/html" },
      credentials: "same-origin",
    })
      .then(function (resp) {
        return resp.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("[data-playground]");
        if (!fresh) throw new Error("no playground in the answer");
        swap(root, fresh);
      })
      .catch(function () {
        window.location.reload();
      });
  };

  // Disables every button of the playground while an action runs; the pressed form's
  // button says what is happening.
  function showBusy(root, form) {
    var buttons = Array.prototype.slice.call(root.querySelectorAll("button[type=submit], input[type=submit]"));
    buttons.forEach(function (b) {
      b.disabled = true;
    });
    var pressed = form.querySelector("button[type=submit][data-busy-label]");
    if (pressed) {
      pressed.setAttribute("data-label", pressed.textContent);
      pressed.textContent = pressed.getAttribute("data-busy-label");
    }
    root.setAttribute("aria-busy", "true");
    return { root: root, buttons: buttons };
  }

  function clearBusy(state) {
    state.root.removeAttribute("aria-busy");
    state.buttons.forEach(function (b) {
      if (!b.isConnected) return;
      b.disabled = false;
      if (b.hasAttribute("data-label")) {
        b.textContent = b.getAttribute("data-label");
        b.removeAttribute("data-label");
      }
    });
  }

  // Moves the new rendering in, but keeps each live region's own element (filled with the
  // new content): a screen reader announces changes inside a region it knows, not a new one.
  function swap(root, fresh) {
    var olds = root.querySelectorAll("[aria-live]");
    var news = fresh.querySelectorAll("[aria-live]");
    if (olds.length === news.length) {
      for (var i = 0; i < olds.length; i++) {
        var o = olds[i];
        var n = news[i];
        o.replaceChildren.apply(o, Array.prototype.slice.call(n.childNodes));
        n.replaceWith(o);
      }
    }
    var opened = Array.prototype.map.call(root.querySelectorAll("details"), function (d) {
      return d.open;
    });
    // The learner's view (the ticket function or after COMMIT) stays theirs: the server
    // chose one for a page load, not for an answer to a form of the view they are in.
    var view = root.querySelector("input[name=page_view]:checked");
    var keep = view && fresh.querySelector('input[name=page_view][value="' + CSS.escape(view.value) + '"]');
    if (keep) {
      fresh.querySelectorAll("input[name=page_view]").forEach(function (r) {
        r.toggleAttribute("checked", r === keep);
        r.checked = r === keep;
      });
    }
    root.replaceChildren.apply(root, Array.prototype.slice.call(fresh.childNodes));
    // A fold marked data-fresh belongs to this answer alone (the predict-first tables): it
    // starts closed whatever stood at its place before.
    root.querySelectorAll("details").forEach(function (d, i) {
      if (opened[i] && !d.hasAttribute("data-fresh")) d.open = true;
    });
    // The controls are an island: hydrate the new copy once the WebAssembly is there (if
    // it is still loading, it hydrates whatever the page holds when it arrives).
    if (window.__hydrateIsland) {
      root.querySelectorAll("leptos-island").forEach(function (el) {
        window.__hydrateIsland(el, el.dataset.component);
      });
    }
    // The embed tells its course page what the learner has explored (see pages/embed.rs).
    document.dispatchEvent(new Event("outbox-playground:swapped"));
  }

  // The answer to a form is the outcome panel. The ticket function's form sits right above
  // it, and the page stays where the learner left it; the after-COMMIT forms sit a strip and
  // a row of forms above it, where it would start below the window: there it is brought up
  // to 40 % of the window, with the run's own result under it and the pressed button above.
  function revealOutcome(root) {
    var out = root.querySelector("section.outcome");
    if (!out) return;
    var top = out.getBoundingClientRect().top;
    if (top > window.innerHeight * 0.75) window.scrollBy(0, top - window.innerHeight * 0.4);
  }

  // Remembers where keyboard focus was, as a selector that also finds it in the new page.
  function focusKey(root) {
    var el = document.activeElement;
    if (!el || !root.contains(el)) return null;
    if (el.id) return "#" + CSS.escape(el.id);
    var form = el.form;
    if (form && form.getAttribute("action") && el.type === "submit") {
      return 'form[action="' + CSS.escape(form.getAttribute("action")) + '"] button[type=submit]';
    }
    return null;
  }

  function restoreFocus(root, key) {
    if (!key) return;
    var el = root.querySelector(key);
    if (el) el.focus({ preventScroll: true });
  }
})();
