// Lamar ui: reload the page when another process writes to the store, unless the user is
// in the middle of filling a form. No data is read here; the server renders every page.
// When the server stops answering, say so: a page that silently stops following the store
// would show stale verdicts as if they were current.
(function () {
  "use strict";
  var shown = document.body.getAttribute("data-version");
  // A page that answers a form (a review, an error to mend) is not reloaded: it is kept as it was
  // answered, so a reload would change nothing but lose what was typed into it since.
  var busy = document.body.getAttribute("data-follow") === "no";
  var banner = null;
  function warn(text) {
    if (!banner) {
      banner = document.createElement("p");
      banner.id = "offline";
      banner.className = "offline";
      banner.setAttribute("role", "alert");
      document.body.insertBefore(banner, document.body.firstChild);
    }
    banner.textContent = text;
  }
  function clear() {
    if (banner) { banner.remove(); banner = null; }
  }
  document.addEventListener("input", function () { busy = true; });
  // A form sent (Yes, erase on a long log; a write waiting for the store's lock) awaits its answer:
  // a reload then would cancel it, and show the question again as if nothing had been sent.
  document.addEventListener("submit", function () {
    busy = true;
    // An answer that takes longer than a click (a write waiting for another process's lock, sleep on a big
    // store) is said to be awaited: a page that sits as it was reads as a click that was missed.
    setTimeout(function () {
      if (document.getElementById("waiting")) { return; }
      var note = document.createElement("p");
      note.id = "waiting";
      note.className = "offline";
      note.setAttribute("role", "status");
      note.textContent = "Sent: waiting for lamar ui's answer (a write waits while another process holds " +
                         "the store's lock; sleep takes a while on a big store).";
      document.body.insertBefore(note, document.body.firstChild);
    }, 1500);
  });
  setInterval(function () {
    if (busy || document.hidden) { return; }
    fetch("/api/version", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (r.status === 403) {
          warn("This page's token is no longer valid (was lamar ui restarted?): open the address it printed.");
          return null;
        }
        if (r.status === 503) {  // the store was deleted or replaced: this page is the old store's
          warn("lamar ui can no longer read its store (deleted or replaced?): this page no longer follows " +
               "the store. Reload it to see why.");
          return null;
        }
        return r.ok ? r.json() : null;
      })
      .then(function (data) {
        if (!data) { return; }
        clear();
        if (String(data.version) !== shown) { window.location.reload(); }
      })
      .catch(function () {
        warn("lamar ui is not answering (stopped?): this page no longer follows the store. " +
             "Start it again and open the address it prints.");
      });
  }, 2000);
})();
