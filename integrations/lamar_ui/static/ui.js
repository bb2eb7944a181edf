// Lamar ui: reload the page when another process writes to the store, unless the user is
// in the middle of filling a form. No data is read here; the server renders every page.
(function () {
  "use strict";
  var shown = document.body.getAttribute("data-version");
  var busy = false;
  document.addEventListener("input", function () { busy = true; });
  setInterval(function () {
    if (busy || document.hidden) { return; }
    fetch("/api/version", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (data && String(data.version) !== shown) { window.location.reload(); }
      })
      .catch(function () { /* the server stopped: keep the page as it is */ });
  }, 2000);
})();
