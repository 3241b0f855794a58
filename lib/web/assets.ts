/**
 * The UI's one stylesheet and one small script, inlined with the response's
 * CSP nonce. At phone widths (up to 640 px) every table becomes a stack of
 * cards, each value under its column's name (`data-label`), so no column is
 * hidden; ids break only between their segments (`idText` in shell.ts;
 * decision 334).
 */

export const CSS = `
:root{--fg:#1b1f24;--muted:#57606a;--bg:#f6f8fa;--card:#fff;--line:#d0d7de;--accent:#0550ae;--bad:#a40e26;--font:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 var(--font);color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
:focus-visible{outline:3px solid #1f6feb;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:2}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.top{display:flex;flex-wrap:wrap;gap:8px;justify-content:space-between;align-items:center;padding:10px 20px;background:#24292f;color:#fff}
.top a.brand{color:#fff;font-weight:600;text-decoration:none}
.zone{max-width:1000px;margin:0 auto;padding:6px 20px 0;display:flex;flex-wrap:wrap;gap:4px 16px;justify-content:flex-end;font-size:.85rem;color:var(--muted)}.langs{display:flex;gap:10px}
.who{display:flex;gap:12px;align-items:center;font-size:.9rem}.who form{margin:0}
button.link{background:none;border:1px solid #8c959f;color:#fff;padding:4px 10px}
main{max-width:1000px;margin:0 auto;padding:16px 20px 40px}
h1{font-size:1.6rem;margin:.4em 0}.title{word-break:break-word}
h2{font-size:1.15rem;margin:0 0 .6em}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px;margin:16px 0}
.crumbs{margin:0;font-size:.9rem}
.muted,.empty{color:var(--muted)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem}
label{display:block;font-weight:600;margin-bottom:4px}
input[type=search],input[type=text],input[type=password],select,textarea{width:100%;padding:8px;border:1px solid #8c959f;border-radius:6px;font:inherit;background:#fff;color:var(--fg)}
textarea.mono,input.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
button{font:inherit;padding:8px 14px;border-radius:6px;border:1px solid #1a7f37;background:#1f883d;color:#fff;cursor:pointer;min-height:40px}
button.secondary{background:#fff;color:var(--fg);border-color:#8c959f}
button.copy{background:#fff;color:var(--accent);border-color:var(--accent);padding:4px 10px;min-height:36px}
button:disabled{opacity:.55;cursor:not-allowed}
.search{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-end;margin:8px 0 16px}
.field{margin:0 0 12px}.search .field{margin:0}.grow{flex:1 1 260px}
.row{display:flex;gap:8px}.row input{flex:1;min-width:0}
.table-wrap{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:8px}
table.list{width:100%;border-collapse:collapse}
.list th,.list td{text-align:left;padding:10px 12px;border-bottom:1px solid var(--line);vertical-align:middle}
.list tbody tr:last-child td{border-bottom:0}
.list td.name{word-break:break-word;max-width:360px}
.nb{white-space:nowrap}.id{word-break:normal;overflow-wrap:normal}
.state{display:inline-flex;align-items:center;gap:6px;padding:2px 10px;border-radius:999px;font-size:.85rem;font-weight:600;border:1px solid;white-space:nowrap}
.state .dot{width:8px;height:8px;border-radius:50%;background:currentColor}
.state-queued{color:#0550ae;background:#ddf4ff}
.state-downloading{color:#0a5d63;background:#d8f3f1}
.state-paused{color:#4d5661;background:#eaeef2}
.state-stuck{color:#7a4100;background:#fff1c7}
.state-completed{color:#116329;background:#dafbe1}
.state-failed{color:#a40e26;background:#ffebe9}
.state-cancelled{color:#3d444d;background:#eaeef2;border-style:dashed}
.hold{font-size:.8rem;color:#7a4100;white-space:nowrap}
.transfer{display:block;font-size:.8rem;color:var(--muted);overflow-wrap:anywhere}
.progress{display:inline-flex;align-items:center;gap:8px;white-space:nowrap}
.list time{white-space:nowrap}
progress{width:120px;height:12px;accent-color:#1f883d}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:8px 16px;margin:0}.facts dt{font-weight:600}.facts dd{margin:0;overflow-wrap:anywhere}
.hashes{list-style:none;padding:0;margin:0 0 16px}
.hashes li{display:flex;flex-wrap:wrap;gap:8px;align-items:center;padding:8px 0;border-bottom:1px solid var(--line)}
.hash{flex:1 1 200px}
.kind{font-weight:700;font-size:.8rem;padding:2px 8px;border-radius:4px;background:#eaeef2;color:#1b1f24}
.kind-v2{background:#fbefff;color:#6e2b8c}
.actions{display:flex;gap:12px;flex-wrap:wrap;margin-bottom:16px}.actions form{margin:0}
.notice{border:1px solid var(--bad);background:#ffebe9;color:#5e0a16;border-radius:8px;padding:8px 16px;margin:16px 0}.notice p{margin:.4em 0}.notice a{color:#5e0a16;font-weight:600}
.info{border:1px solid #54aeff;background:#ddf4ff;color:#0a3069;border-radius:8px;padding:8px 16px;margin:16px 0}
.add-download form{margin:0}.add-download .sources{margin-bottom:8px;min-width:0}.add-download{overflow-wrap:anywhere}.hint{margin:0 0 4px;font-size:.9rem;font-weight:400}
.field-error{margin:0 0 4px;color:var(--bad);font-weight:600;overflow-wrap:anywhere}.field-error .detail{font-weight:400}
.add-download [aria-invalid=true]{border-color:var(--bad);border-width:2px}
input[type=number]{width:100%;max-width:16em;padding:8px;border:1px solid #8c959f;border-radius:6px;font:inherit}
input[type=file]{width:100%;max-width:100%;font:inherit}
.advanced{margin:0 0 12px}.advanced summary{cursor:pointer;font-weight:600;margin-bottom:8px;min-height:24px}
.review-link{background:#fff8c5;border:1px solid #d4a72c;border-radius:8px;padding:8px 16px}
fieldset{border:0;padding:0;margin:0}legend{font-weight:600;margin-bottom:8px}
.candidates{list-style:none;padding:0;margin:0 0 16px}
.candidates li{display:flex;gap:10px;align-items:flex-start;padding:10px 0;border-bottom:1px solid var(--line)}
.candidates input{margin-top:6px;width:18px;height:18px}.candidates label{flex:1;font-weight:400;margin:0}
.cname{font-weight:600;word-break:break-word}.meta{display:block;color:var(--muted);font-size:.9rem;overflow-wrap:anywhere}
.pager{display:flex;gap:16px;margin-top:16px}
.signin{max-width:440px}
.sections{display:flex;flex-wrap:wrap;gap:4px 14px;flex:1 1 auto;margin-left:16px}.sections a{color:#fff}
.counts{list-style:none;display:flex;flex-wrap:wrap;gap:8px 16px;padding:0;margin:8px 0 16px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(240px,1fr));gap:16px}
.chart{margin:0;position:relative;overflow:hidden}.chart figcaption{font-weight:600;font-size:.9rem}.chart svg{height:96px;display:block;background:#f6f8fa;border-radius:4px}
.chart .bar{fill:#218bff}.chart .p90{stroke:#a40e26;stroke-width:2}.chart .axis{font-size:9px;fill:#57606a}.chart .axisline{stroke:#8c959f}
.chart .s-succeeded{fill:#2da44e}.chart .s-partial{fill:#d4a72c}.chart .s-failed{fill:#cf222e}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-left:8px}.swatch.s-succeeded{background:#2da44e}.swatch.s-partial{background:#d4a72c}.swatch.s-failed{background:#cf222e}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px;margin:8px 0 16px}.figures div{border:1px solid var(--line);border-radius:6px;padding:8px 12px}.figures dt{font-size:.85rem}.figures dd{margin:2px 0 0;font-size:1.3rem;font-weight:600}.figures dd.muted{font-size:.75rem;font-weight:400;overflow-wrap:anywhere}.figures .over{border-color:var(--bad);background:#fff5f5}.flag{font-size:.8rem;color:#a40e26;font-weight:600}
.st-queued,.st-starting,.st-in-input,.st-running{color:#0550ae;background:#ddf4ff}
.st-settling,.st-publishing{color:#0a5d63;background:#d8f3f1}
.st-done,.st-succeeded{color:#116329;background:#dafbe1}
.st-needs_check,.st-partial{color:#7a4100;background:#fff1c7}
.st-error,.st-failed,.st-missing,.st-expired{color:#a40e26;background:#ffebe9}
.st-not-sent,.marked{border-style:dashed}
.strip{list-style:none;display:grid;grid-template-columns:repeat(24,1fr);gap:3px;padding:0;margin:0 0 8px}
.cell{height:28px;border-radius:3px;border:1px solid var(--line);font-size:.8rem;text-align:center;line-height:26px}
.cell a{display:block;height:100%;color:inherit;text-decoration:none}.cell.none{background:#fff}.cell.sel{outline:3px solid #1b1f24}
.legend .state{font-size:.75rem}
.timeline{list-style:none;padding:0;margin:0}.timeline li{display:flex;flex-wrap:wrap;gap:8px;padding:6px 0;border-bottom:1px solid var(--line)}.timeline span{font-weight:600;min-width:110px}
.reason{min-width:11em;max-width:360px;overflow-wrap:anywhere}.plain{list-style:none;padding:0;margin:0}.plain li{padding:6px 0;overflow-wrap:anywhere}
.ok{border:1px solid #1a7f37;background:#dafbe1;border-radius:8px;padding:4px 16px;margin:16px 0}
.list .num{text-align:right;white-space:nowrap}h3.account{font-size:1rem;margin:16px 0 2px}
@media (max-width:640px){.zone{padding:6px 12px 0;justify-content:flex-start}
.list thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
.list tr{display:block;padding:8px 12px;border-bottom:1px solid var(--line)}.list tbody tr:last-child{border-bottom:0}
.list td{display:flex;flex-wrap:wrap;align-items:baseline;gap:2px 10px;padding:3px 0;border:0;max-width:none}
.list td[data-label]::before{content:attr(data-label);flex:0 0 7.5em;font-weight:600;font-size:.85rem;color:var(--muted)}
.list td:empty{display:none}.reason{min-width:0}.list .num{text-align:left}
.strip{grid-template-columns:repeat(12,1fr)}.sections{margin-left:0;order:3;flex-basis:100%}main{padding:12px}.top{padding:10px 12px}.list th,.list td{padding:8px}progress{width:48px}.facts{grid-template-columns:1fr}.facts dd{margin-bottom:6px}}
`;

// Copy buttons copy exactly their data-copy value; their words come from the page's language (the body's data-*).
export const SCRIPT = `
(function(){
  var status=document.getElementById('status');var words=document.body.dataset;
  function say(t){status.textContent='';setTimeout(function(){status.textContent=t},30)}
  function fallback(text){var a=document.createElement('textarea');a.value=text;a.setAttribute('readonly','');a.style.position='absolute';a.style.left='-9999px';document.body.appendChild(a);a.select();var ok=false;try{ok=document.execCommand('copy')}catch(e){}document.body.removeChild(a);return ok?Promise.resolve():Promise.reject(new Error('copy refused'))}
  document.querySelectorAll('button[data-copy]').forEach(function(b){
    b.addEventListener('click',function(){
      var text=b.getAttribute('data-copy');
      var p=navigator.clipboard&&window.isSecureContext?navigator.clipboard.writeText(text):fallback(text);
      p.then(function(){b.textContent=words.copied;say(words.copiedStatus);setTimeout(function(){b.textContent=words.copy},2000)},function(){say(words.copyFailed)});
    });
  });
})();
`;
