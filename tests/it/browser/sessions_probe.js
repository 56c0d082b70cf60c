// Facts about a report page for tests/html_sessions.rs: what the map and the ship
// charts show for each session choice, and a ship chart under a time window.
// Runs after the page's own script; writes one JSON object into a pre element "probe".
(function () {
  "use strict";
  var out = { sessions: [] };
  function all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  function shown(e) { return e.getClientRects().length > 0 && getComputedStyle(e).display !== "none"; }
  function chartFacts(svg) {
    var owner = svg.closest(".owner"), h4 = svg.parentNode.querySelector("h4[data-ship]");
    var end = function (k) { var t = svg.querySelector("g.xt text[data-end='" + k + "']"); return t ? +t.textContent : null; };
    var fit = svg.querySelector("g.fit");
    return {
      chart: svg.getAttribute("data-chart"),
      ship: h4 ? h4.getAttribute("data-ship") : "",
      session: owner ? +owner.getAttribute("data-session") : -1,
      ends: [end(0), end(1)],
      series: +svg.getAttribute("data-series-count"),
      lanes: svg.classList.contains("lanes"),
      grid: all("text", svg).some(function (t) { return t.textContent === "condition %"; }),
      height: svg.viewBox.baseVal.height,
      note: !!svg.parentNode.querySelector("p.no-conditions"),
      transform: fit ? fit.getAttribute("transform") : null
    };
  }
  function charts() { return all("svg.chart.ship").filter(shown).map(chartFacts); }
  // Drawn tracks: the lives the map's canvas drew (it draws what is due first), by the
  // session the page's data gives each.
  var pageData = JSON.parse(document.getElementById("bcw-data").textContent);
  function tracks() {
    return all("canvas.map-canvas").reduce(function (acc, c) {
      c.bcwFlush();
      var d = pageData[c.parentNode.querySelector("svg[data-chart]").getAttribute("data-chart")];
      var v = c.getAttribute("data-drawn-lives") || "";
      return acc.concat(v ? v.split(" ").map(function (k) { return d.s[+k].se; }) : []);
    }, []);
  }
  function view() {
    var legend = all(".map-legend .group[data-group]").filter(shown).map(function (g) { return g.querySelector("label").textContent; });
    return {
      mapSession: document.body.dataset.mapSession,
      tracks: tracks(),
      charts: charts(),
      legend: legend,
      kills: all("table.kills tr[data-session]").filter(shown).map(function (tr) { return +tr.getAttribute("data-session"); }),
      boards: all("table.scoreboard").filter(shown).map(function (t) { return +t.getAttribute("data-session"); })
    };
  }
  out.errors = (window.__errors || []).length;
  var sel = document.getElementById("session");
  out.options = sel ? all("option", sel).map(function (o) { return o.value; }) : [];
  out.initial = view();
  if (sel) { sel.value = ""; sel.dispatchEvent(new Event("change")); }
  out.all = view();
  out.options.filter(Boolean).forEach(function (v) {
    sel.value = v;
    sel.dispatchEvent(new Event("change"));
    var f = view();
    f.session = +v;
    out.sessions.push(f);
  });
  if (sel) { sel.value = ""; sel.dispatchEvent(new Event("change")); }

  // Brush the middle half of the first ship chart: it then shows that part of its life.
  var svg = all("svg.chart.ship").filter(shown)[0];
  if (svg) {
    var a = svg.getAttribute("data-time").split(" ").map(Number), m = svg.getScreenCTM();
    var at = function (x) { return m.a * x + m.e; }, y = m.d * (a[4] + 20) + m.f;
    svg.dispatchEvent(new MouseEvent("mousedown", { clientX: at(a[0] + (a[1] - a[0]) * 0.25), clientY: y, bubbles: true }));
    window.dispatchEvent(new MouseEvent("mousemove", { clientX: at(a[0] + (a[1] - a[0]) * 0.5), clientY: y, bubbles: true }));
    window.dispatchEvent(new MouseEvent("mouseup", { clientX: at(a[0] + (a[1] - a[0]) * 0.75), clientY: y, bubbles: true }));
    out.windowed = { window: document.body.dataset.window, life: [a[2], a[3]], chart: chartFacts(svg) };
    document.getElementById("window-reset").click();
    out.afterReset = chartFacts(svg);
  }
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
