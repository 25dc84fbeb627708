// Suggestions for the search box: titles and headings from GET /api/suggest.
(function () {
  "use strict";
  var input = document.getElementById("q");
  var list = document.getElementById("q-suggestions");
  if (!input || !list || !window.fetch) { return; }
  var timer = null;
  var asked = "";
  function show(words) {
    while (list.firstChild) { list.removeChild(list.firstChild); }
    words.forEach(function (word) {
      var option = document.createElement("option");
      option.value = word;  // text, never HTML
      list.appendChild(option);
    });
  }
  function ask() {
    var typed = input.value.trim();
    if (typed === asked) { return; }
    asked = typed;
    if (!typed) { show([]); return; }
    fetch(list.dataset.endpoint + "?q=" + encodeURIComponent(typed))
      .then(function (r) { return r.ok ? r.json() : { suggestions: [] }; })
      .then(function (body) { if (asked === typed) { show(body.suggestions || []); } })
      .catch(function () { /* suggestions are a convenience: stay silent */ });
  }
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(ask, 150);
  });
})();
