/** The dashboard's stylesheet: plain CSS, no framework. */
export const DASHBOARD_STYLE = `
:root { --bg:#f6f7f9; --fg:#1d2330; --muted:#6b7385; --line:#dde1e8; --card:#fff;
  --working:#2563eb; --input_required:#b45309; --completed:#15803d; --failed:#b91c1c;
  --cancelled:#6b7280; --tool_error:#c2410c; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
* { box-sizing: border-box; }
[hidden] { display:none !important; }
body { margin:0; background:var(--bg); color:var(--fg); }
header { display:flex; align-items:center; gap:16px; padding:10px 20px; background:#141a26; color:#fff; }
header h1 { font-size:17px; margin:0; flex:1; }
header h1 span { color:#9aa4b8; font-weight:400; }
#who { color:#cfd6e4; }
#live { font-size:12px; padding:2px 8px; border-radius:10px; background:#3b4252; }
#live.on { background:#15803d; }
#live.on::before { content:"● "; }
button { font:inherit; padding:4px 10px; border:1px solid var(--line); border-radius:6px;
  background:#fff; cursor:pointer; }
button.danger { color:var(--failed); border-color:#f1b5b5; }
button:disabled { opacity:.5; cursor:default; }
#login { display:flex; justify-content:center; padding-top:80px; }
#login form { background:var(--card); padding:24px; border-radius:10px; border:1px solid var(--line);
  display:flex; flex-direction:column; gap:10px; width:320px; }
#login input { padding:6px 8px; font:inherit; }
#login-error { color:var(--failed); min-height:1.2em; margin:0; }
main { padding:16px 20px; }
#filters { display:flex; gap:16px; align-items:center; margin-bottom:12px; flex-wrap:wrap; }
#filters input, #filters select { font:inherit; padding:3px 6px; margin-left:4px; }
#count { color:var(--muted); }
#panes { display:flex; gap:16px; align-items:flex-start; }
table { border-collapse:collapse; background:var(--card); border:1px solid var(--line); }
th, td { text-align:left; padding:6px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-size:12px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
tbody tr { cursor:pointer; }
tbody tr:hover, tbody tr.selected { background:#eef3ff; }
td.id { font-family:ui-monospace, monospace; font-size:12px; }
td.msg { max-width:340px; color:#394152; }
.status { display:inline-block; padding:1px 8px; border-radius:10px; color:#fff; font-size:12px; }
.status.working { background:var(--working); } .status.input_required { background:var(--input_required); }
.status.completed { background:var(--completed); } .status.failed { background:var(--failed); }
.status.cancelled { background:var(--cancelled); } .status.tool_error { background:var(--tool_error); }
aside { width:420px; min-width:0; background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 16px; }
aside h2 { font-size:15px; margin:0 0 8px; font-family:ui-monospace, monospace; word-break:break-all; }
aside h3 { font-size:13px; margin:14px 0 4px; color:var(--muted); text-transform:uppercase; }
pre { background:#f2f4f7; padding:8px; border-radius:6px; overflow:auto; max-height:220px; margin:0;
  font-size:12px; white-space:pre-wrap; word-break:break-word; }
ol.timeline { margin:0; padding-left:18px; font-size:13px; }
ol.timeline .when { color:var(--muted); font-family:ui-monospace, monospace; font-size:12px; }
textarea { width:100%; font-family:ui-monospace, monospace; font-size:12px; min-height:70px; }
.note { color:var(--muted); font-size:12px; }
.question { margin:4px 0; font-weight:600; }
.answer-form { display:flex; flex-direction:column; gap:8px; margin:6px 0 10px; }
.answer-form .field { display:flex; flex-direction:column; gap:2px; }
.answer-form .field span { font-size:13px; }
.answer-form .field.required span { font-weight:600; }
.answer-form input[type=text], .answer-form input[type=number], .answer-form select { font:inherit; padding:3px 6px; max-width:100%; }
.answer-form input[type=checkbox] { align-self:flex-start; }
.answer-form .invalid { outline:2px solid var(--failed); }
.answer-form .actions { display:flex; gap:8px; }
.form-error { color:var(--failed); margin:0; min-height:1em; font-size:13px; }
aside { overflow-wrap:anywhere; }
td.msg { overflow-wrap:anywhere; }
aside button.close { float:right; }
#tasks-wrap { flex:1; min-width:0; overflow-x:auto; }
#tasks-wrap table { width:100%; }
@media (max-width: 1000px) {
  main { padding:12px; }
  #panes { flex-direction:column; align-items:stretch; }
  aside { width:auto; }
  td.msg { max-width:220px; }
}
`;
