// Facts about a report page as a browser lays it out, for tests/html_browser.rs.
// Runs after the page's own script; writes one JSON object into a pre element "probe".
(function () {
  "use strict";
  var out = {};
  function all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  function shown(e) { return e.getClientRects().length > 0 && getComputedStyle(e).display !== "none"; }
  function pointsX(pl) {
    var a = (pl.getAttribute("points") || "").trim();
    return a ? a.split(/\s+/).map(function (p) { return +p.split(",")[0]; }) : [];
  }
  function pathX(d) {
    var xs = [], re = /M(-?[\d.]+),/g, m;
    while ((m = re.exec(d))) xs.push(+m[1]);
    return xs;
  }
  function timeOf(svg) { return svg.getAttribute("data-time").split(" ").map(Number); }
  function px(tm, t) { return tm[0] + (t - tm[2]) / (tm[3] - tm[2]) * (tm[1] - tm[0]); }

  // The map draws on a canvas at the next animation frame; draw what is due now, then
  // read what it drew (the canvas writes it in data attributes).
  function maps() {
    var cs = all("canvas.map-canvas");
    cs.forEach(function (c) { c.bcwFlush(); });
    return cs;
  }
  function drawnLives(c) { var v = c.getAttribute("data-drawn-lives") || ""; return v ? v.split(" ").map(Number) : []; }
  function mapPoints() {
    return maps().reduce(function (n, c) { return n + +c.getAttribute("data-drawn-points"); }, 0);
  }
  function view(c) { return c.getAttribute("data-view").split(" ").map(Number); }
  var pageData = JSON.parse(document.getElementById("bcw-data").textContent);
  function seriesOf(c) { return pageData[c.parentNode.querySelector("svg[data-chart]").getAttribute("data-chart")].s; }

  out.errors = (window.__errors || []).length;
  out.resources = performance.getEntriesByType("resource").map(function (r) { return r.name; });
  out.scrollWidth = document.documentElement.scrollWidth;
  out.clientWidth = document.documentElement.clientWidth;

  // The first screen: the first section's heading and whether the scoreboard's table
  // starts inside the first 900 px of the page.
  var firstH2 = document.querySelector("main section h2");
  out.firstSection = firstH2 ? firstH2.textContent : "";
  var sbHead = all("h3").filter(function (h) { return h.textContent === "Scoreboard"; })[0];
  var sbTable = document.querySelector("table.scoreboard");
  out.scoreboardHeading = !!sbHead && !!sbTable && !!(sbHead.compareDocumentPosition(sbTable) & Node.DOCUMENT_POSITION_FOLLOWING);
  out.scoreboardTop = sbTable ? sbTable.getBoundingClientRect().top + window.scrollY : -1;
  function cellsOf(tr) { return Array.prototype.slice.call(tr.children); }
  function headOf(tb) { return cellsOf(tb.querySelector("tr")).map(function (c) { return c.textContent.replace(/ [▲▼]$/, ""); }); }
  out.scoreboards = all("table.scoreboard").map(function (tb) {
    return {
      session: +tb.getAttribute("data-session"),
      head: headOf(tb),
      rows: all("tr", tb).slice(1).map(function (tr) {
        return cellsOf(tr).map(function (c, i) { return i === 0 ? c.textContent : c.getAttribute("data-v"); });
      })
    };
  });
  out.kills = all("table.kills tr").slice(1).map(function (tr) {
    var c = cellsOf(tr).map(function (x) { return x.textContent; });
    return { t: +tr.getAttribute("data-t"), cells: c };
  });
  var ht = document.querySelector("table.health");
  out.health = ht ? {
    head: headOf(ht),
    rows: all("tr", ht).slice(1).map(function (tr) {
      return cellsOf(tr).map(function (c, i) { return i === 0 ? c.textContent : c.getAttribute("data-v"); });
    }),
    worst: all("td.worst", ht).map(function (td) { return [cellsOf(td.parentNode)[0].textContent, cellsOf(td.parentNode).indexOf(td)]; })
  } : null;
  // Sort the health table by its jitter column, twice: largest first, then smallest.
  if (ht) {
    var col = headOf(ht).indexOf("jitter ms"), th = ht.querySelector("tr").children[col];
    var column = function () {
      return all("tr", ht).slice(1).map(function (tr) { var v = tr.children[col].getAttribute("data-v"); return v === "" ? null : +v; });
    };
    th.click();
    out.sortedDesc = column();
    th.click();
    out.sortedAsc = column();
  }
  // The first kill's link sets the window around it and leads to the map.
  var link = document.querySelector("a.kill-link");
  if (link) {
    link.click();
    out.killWindow = document.body.dataset.window;
    out.killLink = [+link.getAttribute("data-t0"), +link.getAttribute("data-t1"), link.getAttribute("href")];
    out.killMapPoints = mapPoints();
    document.getElementById("window-reset").click();
  }
  // The map legend: one line per player.
  out.legend = all(".map-legend .group[data-group]").map(function (g) {
    return { label: g.querySelector("label").textContent, player: g.getAttribute("data-player") };
  });

  // Smallest chart text as drawn on screen (font size times the SVG's scale).
  var minText = 1e9, minTextWhat = "";
  all("svg.chart").forEach(function (svg) {
    if (!shown(svg)) return;
    var m = svg.getScreenCTM();
    if (!m) return;
    all("text", svg).forEach(function (t) {
      var fs = parseFloat(getComputedStyle(t).fontSize) * m.a;
      if (t.textContent && fs < minText) { minText = fs; minTextWhat = t.textContent; }
    });
  });
  out.minText = minText;
  out.minTextWhat = minTextWhat;

  // Every drawn line and event of a ship chart lies within its life (1.5 px of slack
  // for rounding), and no mark lies left of the life's start.
  out.outsideLife = [];
  out.shipCharts = 0;
  all("svg.chart.ship").forEach(function (svg) {
    out.shipCharts++;
    var tm = timeOf(svg), xb = px(tm, +svg.dataset.born) - 1.5, xe = px(tm, +svg.dataset.end) + 1.5;
    all("polyline", svg).forEach(function (pl) {
      pointsX(pl).forEach(function (x) {
        if (x < xb || x > xe) out.outsideLife.push(svg.dataset.chart + " line x=" + x + " life " + xb + "-" + xe);
      });
    });
    all("path[data-marks]", svg).forEach(function (pa) {
      var kind = pa.getAttribute("data-marks"), shift = kind === "kill" ? 4 : 0;
      pathX(pa.getAttribute("d")).forEach(function (x) {
        if (x + shift < xb || x + shift > xe) out.outsideLife.push(svg.dataset.chart + " " + kind + " x=" + (x + shift) + " life " + xb + "-" + xe);
      });
    });
  });

  // Colours of opcodes in every rate legend: one colour per opcode.
  out.opcodeColours = {};
  out.colourClashes = [];
  all("section#rates .legend > span").forEach(function (sp) {
    var sw = sp.querySelector(".sw");
    var m = /^(0x[0-9A-F]{2})/.exec(sp.textContent);
    if (!sw || !m) return;
    var c = getComputedStyle(sw).backgroundColor, seen = out.opcodeColours[m[1]];
    if (seen && seen !== c) out.colourClashes.push(m[1] + " " + seen + " vs " + c);
    out.opcodeColours[m[1]] = c;
  });

  // Zoom the map: its tick labels change to the part shown and stay 11 px on screen.
  var map = document.querySelector("svg.map[data-zoom]");
  if (map) {
    var ticks = function () { return all("g.axes text", map).map(function (t) { return t.textContent; }).join(" "); };
    var screenSize = function () {
      var t = map.querySelector("g.axes text"), m = map.getScreenCTM();
      return parseFloat(getComputedStyle(t).fontSize) * m.a;
    };
    var canvas = maps()[0];
    var mr = map.getBoundingClientRect(), before = ticks(), viewBefore = view(canvas);
    for (var i = 0; i < 6; i++) {
      map.dispatchEvent(new WheelEvent("wheel", { deltaY: -100, clientX: mr.left + mr.width / 2, clientY: mr.top + mr.height / 2, bubbles: true, cancelable: true }));
    }
    maps();
    out.zoom = { ticksChanged: ticks() !== before, textPx: screenSize(), ticks: all("g.axes text", map).length,
                 viewBefore: viewBefore, viewAfter: view(canvas) };
    // Drag to the right by a quarter of the map: the view moves left.
    map.dispatchEvent(new MouseEvent("mousedown", { clientX: mr.left + mr.width / 2, clientY: mr.top + mr.height / 2, bubbles: true, cancelable: true }));
    map.dispatchEvent(new MouseEvent("mousemove", { clientX: mr.left + mr.width * 3 / 4, clientY: mr.top + mr.height / 2, bubbles: true }));
    window.dispatchEvent(new MouseEvent("mouseup", { bubbles: true }));
    maps();
    out.zoom.viewPanned = view(canvas);
    map.dispatchEvent(new MouseEvent("dblclick", { bubbles: true }));
    maps();
    out.zoom.viewReset = view(canvas);
    // The first player's legend toggle: their lives leave the map, and come back.
    var toggle = document.querySelector(".map-legend input[data-toggle-group]");
    if (toggle) {
      var group = +toggle.getAttribute("data-toggle-group"), s = seriesOf(canvas);
      var livesOf = function () { return drawnLives(maps()[0]).map(function (k) { return s[k].g; }); };
      var all0 = livesOf();
      toggle.click();
      out.legendToggle = { group: group, before: all0, off: livesOf() };
      toggle.click();
      out.legendToggle.on = livesOf();
    }
  }

  function visibleShips() { return all("div.ship").filter(shown).length; }
  function shades() { return all("svg.chart g.win rect.win-shade").length; }
  // Seconds a shown ship chart spans (its life, or the part inside the window).
  function shipSpans() {
    return all("svg.chart.ship").filter(shown).map(function (svg) {
      var v = svg.getAttribute("data-view"), t = timeOf(svg);
      return v ? v.split(" ").map(Number) : [t[2], t[3]];
    });
  }

  // Brush the middle fifth of the host's rate chart.
  out.before = { mapPoints: mapPoints(), ships: visibleShips(), shades: shades() };
  var rates = document.querySelector("svg[data-chart$='rates-s2c']");
  if (rates) {
    var r = rates.getBoundingClientRect(), y = r.top + r.height / 2;
    var at = function (f) { return r.left + r.width * f; };
    rates.dispatchEvent(new MouseEvent("mousedown", { clientX: at(0.4), clientY: y, bubbles: true }));
    window.dispatchEvent(new MouseEvent("mousemove", { clientX: at(0.55), clientY: y, bubbles: true }));
    window.dispatchEvent(new MouseEvent("mouseup", { clientX: at(0.6), clientY: y, bubbles: true }));
  }
  out.window = document.body.dataset.window;
  out.brushed = { mapPoints: mapPoints(), ships: visibleShips(), shades: shades(), spans: shipSpans() };
  out.slider = all(".slider input[type=range]").map(function (i) { return +i.value; });
  // Exactly the track points inside the window, and every life with one such point.
  var w = out.window.split(" ").map(Number);
  out.mapFollowsWindow = maps().every(function (c) {
    var lives = [], points = 0;
    seriesOf(c).forEach(function (s, k) {
      if (!s || s.m) return;
      var inside = s.p.filter(function (p) { return p[2] >= w[0] && p[2] <= w[1]; }).length;
      if (inside) lives.push(k);
      points += inside;
    });
    return +c.getAttribute("data-drawn-points") === points &&
      drawnLives(c).slice().sort(function (a, b) { return a - b; }).join(" ") === lives.join(" ");
  });
  document.getElementById("window-reset").click();
  out.reset = { window: document.body.dataset.window, mapPoints: mapPoints(), ships: visibleShips() };

  // Choose the first player: only their series stay.
  var sel = document.getElementById("player");
  out.players = all("option", sel).map(function (o) { return o.value; }).filter(Boolean);
  var who = out.players[0];
  sel.value = who;
  sel.dispatchEvent(new Event("change"));
  out.chosen = who;
  out.otherPlayersShown = all("[data-player]").filter(function (e) {
    return e.getAttribute("data-player") !== who && shown(e);
  }).map(function (e) { return e.tagName + " " + e.getAttribute("data-player"); });
  out.playerSeriesShown = all("section#players polyline[data-player]").filter(function (e) {
    return e.getAttribute("data-player") === who && shown(e);
  }).length;
  out.playerShipsShown = all("section#ships .owner[data-player]").filter(shown).length;
  // Only the chosen player's lives on the map and in its legend.
  out.mapLivesShown = [];
  maps().forEach(function (c) {
    var s = seriesOf(c);
    drawnLives(c).forEach(function (k) { out.mapLivesShown.push(s[k].pl); });
  });
  out.legendShown = all(".map-legend .group[data-group]").filter(shown).map(function (g) { return g.getAttribute("data-player"); });

  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
