// Live updates: the server pushes the page's live part over Server-Sent
// Events whenever what it shows changes; this swaps it in, keeping which
// leaf switches the viewer opened or folded.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var conn = document.getElementById("conn");
  var folded = {};

  function remember(root) {
    root.querySelectorAll("details.leaf").forEach(function (d) {
      d.addEventListener("toggle", function () { folded[d.id] = !d.open; });
    });
  }
  function restore(root) {
    root.querySelectorAll("details.leaf").forEach(function (d) {
      if (d.id in folded) { d.open = !folded[d.id]; }
    });
  }

  if (live && live.dataset.live) {
    remember(live);
    var es = new EventSource(live.dataset.live);
    es.addEventListener("open", function () { if (conn) conn.className = "conn up"; });
    es.addEventListener("error", function () { if (conn) conn.className = "conn down"; });
    es.addEventListener("update", function (ev) {
      live.innerHTML = ev.data;
      restore(live);
      remember(live);
      document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
    });
  }

  // A job's output, one rank at a time.
  var logs = document.getElementById("logs");
  if (logs) {
    var pick = document.getElementById("rank");
    var out = document.getElementById("log");
    var stream = null;
    var follow = function () {
      if (stream) { stream.close(); }
      out.textContent = "";
      stream = new EventSource(logs.dataset.src + "?rank=" + encodeURIComponent(pick.value));
      stream.addEventListener("line", function (ev) {
        out.textContent += ev.data + "\n";
        if (out.textContent.length > 200000) { out.textContent = out.textContent.slice(-100000); }
        out.scrollTop = out.scrollHeight;
      });
    };
    pick.addEventListener("change", follow);
    follow();
  }
})();
