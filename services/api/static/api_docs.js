// Lays out /api/openapi.json as a page: one section per tag, one box per operation
// with its parameters, request body and responses, schemas expanded. Written for
// this project's document (OpenAPI 3.1, local $refs only); every text goes in
// through textContent, never as HTML, except the few inline `code` marks.
(function () {
  "use strict";
  var root = document.getElementById("api-reference");
  if (!root || !window.fetch) { return; }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  // Markdown's `code` only: split on backticks, odd parts become <code>.
  function prose(tag, text) {
    var node = el(tag);
    String(text || "").split("`").forEach(function (part, i) {
      node.appendChild(i % 2 ? el("code", null, part) : document.createTextNode(part));
    });
    return node;
  }

  function resolve(spec, schema) {
    var seen = 0;
    while (schema && schema.$ref && seen++ < 20) {
      var target = spec;
      schema.$ref.replace(/^#\//, "").split("/").forEach(function (key) { target = target && target[key]; });
      schema = target;
    }
    return schema || {};
  }

  function typeOf(spec, schema) {
    var s = resolve(spec, schema);
    if (s.const !== undefined) { return JSON.stringify(s.const); }
    if (s.type === "array") { return "array of " + typeOf(spec, s.items || {}); }
    if (s.additionalProperties && typeof s.additionalProperties === "object") {
      return "object of " + typeOf(spec, s.additionalProperties);
    }
    return s.type || (s.properties ? "object" : "any");
  }

  function limits(s) {
    var out = [];
    ["minimum", "maximum", "minLength", "maxLength", "minItems", "default", "pattern"].forEach(function (key) {
      if (s[key] !== undefined) { out.push(key + " " + JSON.stringify(s[key])); }
    });
    return out.join(", ");
  }

  // Properties as a nested list, to a bounded depth (schemas here are small trees).
  function schemaList(spec, schema, depth) {
    var s = resolve(spec, schema);
    if (s.type === "array") { s = resolve(spec, s.items || {}); }
    var props = s.properties || {};
    var names = Object.keys(props);
    if (!names.length || depth > 4) { return null; }
    var required = s.required || [];
    var list = el("ul", "schema");
    names.forEach(function (name) {
      var prop = resolve(spec, props[name]);
      var item = el("li");
      item.appendChild(el("code", null, name));
      item.appendChild(document.createTextNode(
        " (" + typeOf(spec, props[name]) + (required.indexOf(name) >= 0 ? ", required" : "") + ")"));
      var extra = limits(prop);
      if (extra) { item.appendChild(document.createTextNode(" " + extra)); }
      if (prop.description) { item.appendChild(prose("span", " " + prop.description)); }
      var inner = schemaList(spec, props[name], depth + 1);
      if (inner) { item.appendChild(inner); }
      list.appendChild(item);
    });
    return list;
  }

  function parametersTable(spec, parameters) {
    var table = el("table");
    var head = el("tr");
    ["name", "in", "type", "description"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(head);
    parameters.forEach(function (p) {
      p = resolve(spec, p);
      var row = el("tr");
      row.appendChild(el("td")).appendChild(el("code", null, p.name + (p.required ? " *" : "")));
      row.appendChild(el("td", null, p.in));
      var schema = resolve(spec, p.schema || {});
      row.appendChild(el("td", null, typeOf(spec, schema) + (limits(schema) ? "; " + limits(schema) : "")));
      row.appendChild(prose("td", p.description));
      table.appendChild(row);
    });
    return table;
  }

  function content(spec, box, body) {
    Object.keys(body.content || {}).forEach(function (type) {
      var media = body.content[type];
      box.appendChild(el("div", null, type + ": " + typeOf(spec, media.schema || {})));
      var list = schemaList(spec, media.schema || {}, 0);
      if (list) { box.appendChild(list); }
    });
  }

  function operation(spec, path, method, op) {
    var box = el("section", "operation");
    box.id = op.operationId || (method + path);
    var title = el("h3");
    title.appendChild(el("span", "method", method.toUpperCase()));
    title.appendChild(el("span", "path", path));
    if (op.security && op.security.length) { title.appendChild(el("span", "lock", "needs the API token")); }
    box.appendChild(title);
    if (op.summary) { box.appendChild(prose("p", op.summary)); }
    if (op.description) { box.appendChild(prose("p", op.description)); }
    if (op.parameters && op.parameters.length) {
      box.appendChild(el("h4", null, "Parameters"));
      box.appendChild(parametersTable(spec, op.parameters));
    }
    if (op.requestBody) {
      box.appendChild(el("h4", null, "Request body"));
      content(spec, box, resolve(spec, op.requestBody));
    }
    box.appendChild(el("h4", null, "Responses"));
    var list = el("dl");
    Object.keys(op.responses || {}).forEach(function (status) {
      var r = resolve(spec, op.responses[status]);
      list.appendChild(el("dt")).appendChild(el("code", null, status));
      var dd = el("dd");
      dd.appendChild(prose("p", r.description));
      Object.keys(r.headers || {}).forEach(function (name) {
        dd.appendChild(prose("div", "Header `" + name + "`: " + (resolve(spec, r.headers[name]).description || "")));
      });
      content(spec, dd, r);
      list.appendChild(dd);
    });
    box.appendChild(list);
    return box;
  }

  function render(spec) {
    if (spec.info && spec.info.description) { root.appendChild(prose("p", spec.info.description)); }
    var byTag = {};
    var tags = (spec.tags || []).map(function (t) { return t.name; });
    Object.keys(spec.paths || {}).forEach(function (path) {
      Object.keys(spec.paths[path]).forEach(function (method) {
        var op = spec.paths[path][method];
        var tag = (op.tags && op.tags[0]) || "other";
        if (tags.indexOf(tag) < 0) { tags.push(tag); }
        (byTag[tag] = byTag[tag] || []).push(operation(spec, path, method, op));
      });
    });
    tags.forEach(function (tag) {
      if (!byTag[tag]) { return; }
      var section = el("section");
      section.appendChild(el("h2", null, tag));
      var about = (spec.tags || []).filter(function (t) { return t.name === tag; })[0];
      if (about && about.description) { section.appendChild(prose("p", about.description)); }
      byTag[tag].forEach(function (box) { section.appendChild(box); });
      root.appendChild(section);
    });
  }

  fetch(root.getAttribute("data-spec"))
    .then(function (resp) { return resp.json(); })
    .then(render)
    .catch(function (err) { root.appendChild(el("p", null, "Could not load the document: " + err)); });
})();
