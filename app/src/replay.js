// The replay's steps without reloading the page (each step also has its own URL, which is
// what the page uses without JavaScript): ← and → go back and forward, the step links and
// the buttons swap in the server's rendering of their step.
(function () {
  if (!window.fetch || !window.DOMParser || !window.history) return;
  var root = document.querySelector("[data-replay]");
  if (!root) return;
  var loading = false;

  function go(href, focusNav) {
    if (loading || !href) return;
    loading = true;
    fetch(href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (resp) {
        if (!resp.ok) throw new Error("status " + resp.status);
        return resp.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("[data-replay]");
        if (!fresh) throw new Error("no replay in the answer");
        var focused = document.activeElement && document.activeElement.getAttribute("data-nav");
        root.innerHTML = fresh.innerHTML;
        history.replaceState(null, "", href);
        var again = focused && root.querySelector('[data-nav="' + focused + '"]');
        if (focusNav && again && again.tagName === "A") again.focus();
        document.dispatchEvent(new CustomEvent("outbox-playground:swapped"));
      })
      .catch(function () {
        window.location.href = href;
      })
      .then(function () {
        loading = false;
      });
  }

  root.addEventListener("click", function (ev) {
    var link = ev.target.closest && ev.target.closest("a[data-nav], a[data-to]");
    if (!link || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    go(link.getAttribute("href"), true);
  });

  document.addEventListener("keydown", function (ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    var t = ev.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    var rel = ev.key === "ArrowLeft" ? "back" : ev.key === "ArrowRight" ? "forward" : null;
    if (!rel) return;
    var link = root.querySelector('a[data-nav="' + rel + '"]');
    if (!link) return;
    ev.preventDefault();
    go(link.getAttribute("href"), false);
  });
})();
