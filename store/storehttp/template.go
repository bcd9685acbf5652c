package storehttp

import (
	"html/template"
	"strings"
)

// The pages are HTML5 written so that they are also well-formed XML
// (quoted attributes, closed empty elements, character references only),
// which lets the tests parse them with encoding/xml. They load nothing:
// no script, no font, no image but the inline SVG.
var pageTemplate = template.Must(template.New("").Funcs(template.FuncMap{"kv": newKV}).Parse(strings.NewReplacer(
	"@observed@", cssColor(observedColor),
	"@fluid@", cssColor(fluidColor),
	"@floor@", cssColor(floorColor),
).Replace(pageSource)))

// kvTable is a titled table of rows: the configuration, occupancy and
// traffic cards.
type kvTable struct {
	ID, Title string
	Rows      []row
}

func newKV(id, title string, rows []row) kvTable { return kvTable{id, title, rows} }

const pageSource = `
{{- define "head" -}}
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
{{- if .Refresh}}
<meta http-equiv="refresh" content="{{.Refresh}}"/>
{{- end}}
<style>
:root { --obs: @observed@; --fluid: @fluid@; --floor: @floor@; --ink: #1d2430; --muted: #5b6573; --line: #e2e6ec; --bg: #f5f6f8; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
a { color: #1f5f99; }
header { background: #1d2430; color: #fff; padding: 12px 24px; display: flex; flex-wrap: wrap; align-items: center; gap: 10px 24px; }
header h1 { margin: 0; font-size: 19px; font-weight: 600; }
header h1 a { color: #9fb3c8; text-decoration: none; }
header nav { display: flex; flex-wrap: wrap; gap: 4px; align-items: center; margin-left: auto; }
header nav a { color: #fff; text-decoration: none; padding: 3px 9px; border-radius: 4px; border: 1px solid #3b4656; font-size: 13px; }
header nav form { display: inline; margin: 0; }
header nav button { font: inherit; font-size: 13px; color: #fff; background: none; cursor: pointer; padding: 3px 9px; border-radius: 4px; border: 1px solid #3b4656; }
header nav a:hover, header nav button:hover { background: #2c3644; }
header nav a.on { background: #2f74b5; border-color: #2f74b5; }
header nav a.primary { background: #fff; color: #1d2430; border-color: #fff; font-weight: 600; }
header nav span { color: #9fb3c8; margin: 0 4px 0 12px; font-size: 12px; text-transform: uppercase; letter-spacing: .05em; }
main { max-width: 1240px; margin: 0 auto; padding: 14px 24px 28px; }
.when { color: var(--muted); margin: 0 0 12px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 14px; margin-bottom: 14px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin-bottom: 14px; }
.cards .card { margin-bottom: 0; }
h2 { font-size: 12px; margin: 0 0 8px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
td, th { padding: 3px 8px 3px 0; text-align: left; vertical-align: baseline; }
.kv th { font-weight: normal; color: var(--muted); white-space: nowrap; width: 34%; }
.kv td { font-weight: 600; }
small, .note { color: var(--muted); font-weight: normal; }
small { margin-left: 6px; }
.num td, .num th { text-align: right; padding: 3px 10px; }
.num th:first-child, .num td:first-child { text-align: left; }
.num thead th { border-bottom: 1px solid var(--line); font-weight: 600; color: var(--muted); }
.num tbody tr:nth-child(even) { background: #f9fafb; }
.far { color: #b45309; font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; gap: 12px 24px; }
.charts figure { flex: 1 1 460px; min-width: 0; max-width: 640px; }
figure { margin: 0; }
svg { width: 100%; height: auto; display: block; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 20px; margin: 0 0 8px; color: var(--muted); }
.key { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px; margin-right: 6px; }
.obs { background: var(--obs); }
.fluid { background: var(--fluid); }
.floor { background: var(--floor); height: 2px; vertical-align: 4px; width: 18px; }
.line { height: 2px; vertical-align: 4px; width: 18px; }
.round { border-radius: 50%; width: 8px; height: 8px; vertical-align: 1px; }
footer { color: var(--muted); font-size: 12px; }
</style>
{{- end}}

{{- define "page" -}}
{{template "head" .}}
<title>{{.Name}} · twochoice</title>
</head>
<body>
<header>
<h1><a href="./">twochoice</a> / {{.Name}}</h1>
<nav>
<a class="primary" href="{{.Self}}">Refresh</a>
<span>auto</span>
{{- range .Auto}}
<a href="{{.Href}}"{{if .On}} class="on"{{end}}>{{.Label}}</a>
{{- end}}
<span>data</span>
<a href="{{.JSON}}">JSON</a>
{{- with .Snapshot}}
<form method="post" action="{{.}}"><button type="submit" title="save a snapshot of the store, every key and value, and download it">snapshot</button></form>
{{- end}}
</nav>
</header>
<main>
<p class="when">Measured at {{.Taken}} in {{.Took}}{{if .Refresh}}; the page reloads every {{.Refresh}} s{{end}}.</p>
<div class="cards">
{{template "kv" (kv "configuration" "Configuration" .Config)}}
{{template "kv" (kv "occupancy" "Occupancy" .Occupancy)}}
{{template "kv" (kv "traffic" "Traffic" .Traffic)}}
{{- with .Policy}}
{{template "kv" (kv "policy" "Eviction policy" .)}}
{{- end}}
</div>
<section class="card" id="loads">
<h2>Bucket loads next to the fluid limit</h2>
<div class="legend">
<span><span class="key obs"></span>this store</span>
<span><span class="key fluid"></span>fluid limit: {{.Describe}}</span>
<span><span class="key floor"></span>one bucket: the smallest share a table can show</span>
</div>
<div class="charts">
<figure id="histogram">{{.Charts.Histogram}}</figure>
<figure id="tail">{{.Charts.Tail}}</figure>
</div>
<p class="note">Left: the share of buckets holding each number of keys. Right: the share holding at least k, on a log scale, where the few fullest buckets show; the theory is about them. Hover over a bar for its figures.{{with .Deletes}} {{.}}{{end}}</p>
</section>
{{- if .Parts}}
<section class="card" id="parts">
<h2>Parts</h2>
<div class="charts">
{{- range .Charts.Parts}}
<figure class="part">{{.}}</figure>
{{- end}}
</div>
<table class="num">
<thead><tr><th>part</th><th>buckets</th><th>bucket range</th><th>share of keys</th><th>fluid limit</th><th>mean load</th><th>fluid limit</th></tr></thead>
<tbody>
{{- range .Parts}}
<tr><td>{{.Part}}</td><td>{{.Buckets}}</td><td>{{.Range}}</td><td>{{.Keys}}</td><td>{{.FluidKeys}}</td><td>{{.Mean}}</td><td>{{.FluidMean}}</td></tr>
{{- end}}
</tbody>
</table>
</section>
{{- end}}
<section class="card" id="table">
<h2>Loads</h2>
<table class="num">
<thead><tr><th>load k</th><th>buckets</th><th>at k</th><th>fluid limit</th><th>share ≥ k</th><th>fluid limit</th><th>z</th></tr></thead>
<tbody>
{{- range .Loads}}
<tr><td>{{.K}}</td><td>{{.Buckets}}</td><td>{{.At}}</td><td>{{.FluidAt}}</td><td>{{.AtLeast}}</td><td>{{.FluidAtLeast}}</td><td{{if .Far}} class="far"{{end}}>{{.Z}}</td></tr>
{{- end}}
</tbody>
</table>
<p class="note">z: how far the buckets at ≥ k are from the limit, in binomial standard deviations; |z| under 3 or so is chance, and finite tables sit a little under the limit in the far tail.</p>
</section>
<footer>twochoice debug page · <a href="{{.JSON}}">the same data as JSON</a> · rendered on the server, no script</footer>
</main>
</body>
</html>
{{end}}

{{- define "kv" -}}
<section class="card" id="{{.ID}}">
<h2>{{.Title}}</h2>
<table class="kv">
{{- range .Rows}}
<tr><th>{{.Label}}</th><td>{{.Value}}{{with .Note}}<small>{{.}}</small>{{end}}</td></tr>
{{- end}}
</table>
</section>
{{- end}}

{{- define "index" -}}
{{template "head" .}}
<title>twochoice stores</title>
</head>
<body>
<header>
<h1>twochoice</h1>
<nav>
<a class="primary" href="./">Refresh</a>
</nav>
</header>
<main>
<section class="card" id="stores">
<h2>Stores</h2>
{{- if .Stores}}
<table class="num">
<thead><tr><th>store</th><th>placement</th><th>d</th><th>C</th><th>entries</th><th>buckets</th><th>utilization</th><th>max load</th><th>stash</th><th>hit ratio</th><th>data</th></tr></thead>
<tbody>
{{- range .Stores}}
<tr><td><a href="{{.Name}}">{{.Name}}</a></td><td>{{.Placement}}</td><td>{{.D}}</td><td>{{.C}}</td><td>{{.Entries}}</td><td>{{.Buckets}}</td><td>{{.Utilization}}</td><td>{{.MaxLoad}}</td><td>{{.Stash}}</td><td>{{.HitRatio}}</td><td><a href="{{.JSON}}">JSON</a></td></tr>
{{- end}}
</tbody>
</table>
{{- else}}
<p class="note">No stores yet.</p>
{{- end}}
</section>
<footer>twochoice debug page · measured at {{.Taken}}</footer>
</main>
</body>
</html>
{{end}}
`
