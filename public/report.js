// Draws the report's charts: each element with data-chart names a
// <script type="application/json"> holding ECharts options built on the
// server. Without JavaScript (or without ECharts) the tables beside each
// chart carry the same numbers, so nothing here is needed to read the page.
// Copy buttons: shown only here, where they work; each copies its
// data-copy text (a mint or wallet address, also in the link's title
// for readers without JavaScript) and says so in its own label.
(function () {
  "use strict";
  if (!navigator.clipboard) return;
  document.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(button.getAttribute("data-copy")).then(function () {
        button.textContent = "Copied";
      }, function () {
        button.textContent = "Copy failed";
      });
    });
  });
})();

(function () {
  "use strict";
  if (typeof window.echarts === "undefined") return;
  document.documentElement.classList.add("charts");
  var charts = [];
  document.querySelectorAll("[data-chart]").forEach(function (el) {
    var source = document.getElementById(el.getAttribute("data-chart"));
    if (!source) return;
    var options;
    try {
      options = JSON.parse(source.textContent);
    } catch (e) {
      return;
    }
    var chart = window.echarts.init(el, null, { renderer: "canvas" });
    chart.setOption(options);
    el.setAttribute("data-drawn", "true");
    charts.push(chart);
  });
  // A table that only repeats a drawn chart folds away (open without
  // JavaScript, where it is the only view of those numbers).
  document.querySelectorAll("details[data-close-when-drawn]").forEach(function (d) {
    var chart = document.getElementById(d.getAttribute("data-close-when-drawn"));
    if (chart && chart.getAttribute("data-drawn") === "true") d.open = false;
  });
  window.addEventListener("resize", function () {
    charts.forEach(function (c) { c.resize(); });
  });
})();
