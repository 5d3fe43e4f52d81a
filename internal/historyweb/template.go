package historyweb

import "html/template"

// extraCSS is what the history's pages add to the report's stylesheet: their navigation, the
// marks of a regression and an improvement, the compare form.
const extraCSS template.CSS = `
nav { color: var(--muted); margin-bottom: .5rem; } nav a { margin-right: .8rem; }
a { color: var(--c0); }
.regression { color: var(--c1); font-weight: 600; } .improvement { color: var(--c2); font-weight: 600; }
table.compare tr.changed td { font-weight: 600; }
td.trend { padding: 0 8px; }
form.compare, form.filter { margin: .8rem 0; } form.compare select, form.compare button, form.filter select, form.filter button { font: inherit; }
form.filter select { max-width: 16rem; } form.filter label { margin-right: .8rem; white-space: nowrap; }
table.series, table.changes { width: 100%; } table.series td, table.changes td { white-space: normal; overflow-wrap: anywhere; }
table.changes td.when, table.changes td.figure, table.changes td.commits, table.series td.trend { white-space: nowrap; }
table.series th:nth-child(4), table.series td:nth-child(4) { text-align: left; }
table.points td:first-child { white-space: normal; min-width: 12em; }
h3.workload { margin: 1.2rem 0 .3rem; }
.machine { color: var(--muted); }
svg .knee.environment line { stroke: var(--muted); stroke-dasharray: 6 3; }
p.where { color: var(--muted); font-size: 12.5px; }
`

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{"mul100": func(v float64) float64 { return v * 100 }}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.Title}}</title>
<style>
{{.Stylesheet}}
</style>
</head>
<body>
<nav><a href="/">All series</a></nav>
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" id="error">{{.Error}}</p>{{end}}
{{with .Index}}
<form class="filter" method="get" action="/">
<label>Workload <select name="workload"><option value="">every workload</option>{{range .Choices.Workloads}}<option value="{{.}}"{{if eq . $.Index.Filter.Workload}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>Target <select name="target"><option value="">every target</option>{{range .Choices.Targets}}<option value="{{.}}"{{if eq . $.Index.Filter.Target}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>Testbed <select name="testbed"><option value="">every testbed</option>{{range .Choices.Testbeds}}<option value="{{.}}"{{if eq . $.Index.Filter.Testbed}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<button type="submit">Show</button>{{if .Filter.Any}} <a href="/">every series</a>{{end}}
</form>
<h2 id="changes">Latest changes</h2>
{{if .Changes}}<div class="scroll"><table class="changes">
<thead><tr><th>When</th><th>Series</th><th>Branch</th><th>Figure</th><th>Change [95 % interval]</th><th>Commit before → at</th><th>Also changed there</th></tr></thead>
<tbody>{{range .Changes}}<tr class="change">
<td class="when">{{.When}}</td><td><a href="/series/{{.SeriesID}}?branch={{.Branch}}">{{.Label}}</a></td><td>{{.Branch}}</td><td class="figure">{{.Figure}}</td>
<td class="{{if .Regression}}regression{{else}}improvement{{end}}">{{if .Regression}}regression{{else}}improvement{{end}} {{.Size}}</td>
<td class="commits"><code>{{.Previous}}</code> → <code>{{.Commit}}</code>{{with .CompareURL}} <a href="{{.}}">compare</a>{{end}}</td><td class="machine">{{.Also}}</td>
</tr>{{end}}</tbody></table></div>
{{if .More}}<p class="notes">{{.More}} earlier changes are on their series' pages.</p>{{end}}
{{else}}<p id="no-changes">No change found{{if .Filter.Any}} in the series shown{{end}}: no series moved by at least {{printf "%.0f" (mul100 .MinEffect)}} % with p &lt; {{.Alpha}} (E-divisive means over the repetitions, at least 3 commits on each side).</p>{{end}}
<h2 id="series">Series</h2>
{{if .Groups}}<p class="notes">{{.Shown}} of {{.Total}} series, grouped by workload. A testbed is the name results were filed under (--testbed), else one made of the CPU model, cores and pinning; hover it for the machine.</p>
{{range .Groups}}<h3 class="workload" id="{{.Anchor}}">{{.Workload}}</h3>
<div class="scroll"><table class="series">
<thead><tr><th>Target</th><th>Load</th><th>Testbed</th><th>Branch</th><th>p99 along commits</th><th>Last p99</th><th>Changes</th><th>Last measured</th></tr></thead>
<tbody>{{range .Series}}<tr class="series-row">
<td><a href="/series/{{.ID}}">{{.Target}}</a></td><td>{{.Load}}</td><td title="{{.TestbedAll}}">{{.Testbed}}</td><td>{{.Branch}}, {{.Commits}} commit{{if ne .Commits 1}}s{{end}}{{with .Others}}; also {{.}}{{end}}</td><td class="trend">{{.Trend}}</td>
<td>{{.LastP99}}</td><td>{{.Changes}}</td><td>{{.Last}}</td>
</tr>{{end}}</tbody></table></div>
{{end}}
{{else if .Total}}<p id="no-series">No series matches this filter: <a href="/">every series</a>.</p>
{{else}}<p>The history holds no series yet: add results with <code>authzbench history add --history DB results/*.json</code>, or run with <code>authzbench run --history DB</code>.</p>{{end}}
{{end}}
{{with .Series}}
<p>Testbed: {{.Testbed}}. Branch <strong>{{.Branch}}</strong>{{if gt (len .Branches) 1}}; also on {{range .Branches}}{{if ne . $.Series.Branch}}<a href="/series/{{$.Series.ID}}?branch={{.}}">{{.}}</a> {{end}}{{end}}{{end}}.</p>
<div class="charts">
<figure>{{.Latency}}<figcaption>Each commit's P50 and P99: the line is the median over its repetitions, the band spans the fastest to the slowest. Hover a point for its commit and values; dotted lines mark the commits where a latency or error-rate change was found, dashed grey ones where the machine or the build changed (kernel, Go, engine version, CPU frequency policy).</figcaption></figure>
<figure>{{.Rate}}<figcaption>Ok responses per second, each commit's median over its repetitions, the band from the lowest to the highest; dotted lines mark where a change of throughput was found, dashed grey ones where the machine or the build changed.</figcaption></figure>
</div>
<h2 id="changes">Changes</h2>
{{if .Changes}}<ul class="changes">{{range .Changes}}<li class="change"><span class="{{if .Regression}}regression{{else}}improvement{{end}}">{{.Figure}} {{if .Regression}}regression{{else}}improvement{{end}}</span> {{.Size}} at <code>{{.Commit}}</code> ({{.When}}), after <code>{{.Previous}}</code>{{with .CompareURL}}: <a href="{{.}}">compare</a>{{end}}</li>{{end}}</ul>
{{else}}<p id="no-changes">No change found along {{.Branch}}: no figure moved by at least {{printf "%.0f" (mul100 .MinEffect)}} % with p &lt; {{.Alpha}}, with at least 3 commits on each side.</p>{{end}}
{{if gt (len .Commits) 1}}<form class="compare" method="get" action="/compare">Compare commit
<select name="base">{{range $i, $c := .Commits}}<option value="{{$c}}"{{if eq $i 1}} selected{{end}}>{{$c}}</option>{{end}}</select> with
<select name="new">{{range $i, $c := .Commits}}<option value="{{$c}}"{{if eq $i 0}} selected{{end}}>{{$c}}</option>{{end}}</select>
<button type="submit">Compare</button></form>{{end}}
<h2 id="commits">Commits, newest first</h2>
<div class="scroll"><table class="points">
<thead><tr><th>Commit</th><th>Measured</th><th>Repetitions</th><th>P50</th><th>P99</th><th>req/s</th><th>Errors</th><th>Reports</th><th>Against the commit before</th></tr></thead>
<tbody>{{range .Points}}<tr class="point">
<td title="{{.Facts}}"><code title="{{.Full}}">{{.Commit}}</code>{{if .Dirty}} (dirty){{end}}{{range .Changed}}<br><small>{{.}}</small>{{end}}{{range .Machine}}<br><small class="machine">{{.}}</small>{{end}}</td><td>{{.When}}</td><td>{{.Reps}}</td><td>{{.P50}}</td><td>{{.P99}}</td><td>{{.Throughput}}</td><td>{{.Errors}}</td>
<td>{{range .Documents}}<a href="/report/{{.}}">report {{.}}</a> {{end}}</td><td>{{with .CompareURL}}<a href="{{.}}">compare</a>{{end}}</td>
</tr>{{end}}</tbody></table></div>
{{end}}
{{with .Cmp}}
<p>{{if .Series}}The runs of <a href="/series/{{.Series}}">{{.SeriesLabel}}</a> at{{else}}Every run of{{end}} the two commits, compared as <code>authzbench compare</code> compares two files: commit <code>{{.New}}</code> (documents {{range .NewDocs}}<a href="/report/{{.}}">{{.}}</a> {{end}}) against commit <code>{{.Base}}</code> (documents {{range .BaseDocs}}<a href="/report/{{.}}">{{.}}</a> {{end}}).</p>
{{.Table}}
{{end}}
{{if .Where}}<p class="where">History: {{.Where}}</p>{{end}}
</body>
</html>
`))
