// The zoom that re-bins, driven as a reader drives it: interval choices, a brushed
// window, a reset. Writes what the page drew into a pre element "probe" as JSON.
(function () {
  "use strict";
  var out = { steps: [] };
  function all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  function chart(id) { return document.querySelector("svg[data-chart=\"" + id + "\"]"); }
  function bars(svg) {
    // Steps of the first series' area: one "H" per bin along its top and its base.
    var g = svg.querySelector("g.rebin");
    var p = g && g.firstChild ? g.querySelector("path[data-series]") : svg.querySelector("g.orig path[data-series]");
    return p ? (p.getAttribute("d").match(/H/g) || []).length / 2 : 0;
  }
  function legendSum(svg) {
    var lg = svg.nextElementSibling, n = 0;
    all("span", lg).forEach(function (sp) {
      var m = /\((\d+)\)$/.exec(sp.textContent);
      if (m && sp.parentNode === lg) n += +m[1];
    });
    return n;
  }
  function snap(name) {
    var s = { name: name, window: document.body.dataset.window, interval: document.body.dataset.interval, charts: {} };
    ["a-rates-c2s", "a-rates-s2c", "a-retx"].forEach(function (id) {
      var svg = chart(id);
      if (!svg) return;
      s.charts[id] = {
        bins: svg.hasAttribute("data-bins") ? +svg.getAttribute("data-bins") : null,
        width: svg.hasAttribute("data-bin-width") ? +svg.getAttribute("data-bin-width") : null,
        count: svg.hasAttribute("data-window-count") ? +svg.getAttribute("data-window-count") : null,
        bars: id.indexOf("rates") > 0 ? bars(svg) : null,
        legend: id.indexOf("rates") > 0 ? legendSum(svg) : null,
        rebinShown: !!svg.querySelector("g.rebin *") && svg.querySelector("g.orig").style.display === "none",
        marks: all("g.marks text[data-mark]", svg).map(function (m) { return [m.getAttribute("data-mark"), m.getAttribute("data-scored"), m.querySelector("title").textContent, +m.getAttribute("data-count")]; })
      };
    });
    // The map legend's point counts of the lives, and whether they say "in the window".
    s.legendPoints = all(".map-legend li[data-k] .win-points").reduce(function (n, sp) { return n + (+sp.textContent || 0); }, 0);
    s.legendInWindow = all(".map-legend li[data-win]").length;
    out.steps.push(s);
  }
  function choose(v) {
    var sel = document.getElementById("interval");
    sel.value = v;
    sel.dispatchEvent(new Event("change"));
  }
  function mouse(target, type, x, y) {
    target.dispatchEvent(new MouseEvent(type, { clientX: x, clientY: y, bubbles: true }));
  }
  out.errorsBefore = (window.__errors || []).length;
  snap("whole");
  choose("1");
  snap("whole 1 s");
  choose("10");
  snap("whole 10 s");
  // Brush from 30 % to 70 % of the host→client chart's plot.
  var svg = chart("a-rates-s2c"), r = svg.getBoundingClientRect();
  var tm = svg.getAttribute("data-time").split(" ").map(Number), k = r.width / svg.viewBox.baseVal.width;
  var x = function (f) { return r.left + (tm[0] + f * (tm[1] - tm[0])) * k; }, y = r.top + r.height / 2;
  mouse(svg, "mousedown", x(0.3), y);
  mouse(window, "mousemove", x(0.5), y);
  mouse(window, "mouseup", x(0.7), y);
  snap("brushed 10 s");
  choose("1");
  snap("brushed 1 s");
  choose("0.1");
  snap("brushed 0.1 s");
  choose("auto");
  snap("brushed auto");
  // The read-out of a zoomed chart names a time inside the window.
  mouse(svg, "mousemove", x(0.5), y);
  out.tip = document.getElementById("tip").textContent;
  mouse(svg, "dblclick", x(0.5), y);
  snap("reset");
  out.errors = (window.__errors || []).length;
  out.errorText = (window.__errors || []).join("\n");
  out.resources = performance.getEntriesByType("resource").map(function (e) { return e.name; });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
