/// The admin console's Mustache templates and stylesheet (`GET /admin`). `{{…}}` is escaped by the engine;
/// `{{{content}}}` (the layout's body) is the only unescaped value, and it is our own rendered template. No
/// script anywhere: forms and links, with `<details>` for what unfolds.
enum ConsoleTemplates {
    static let all: [(String, String)] = [
        ("consoleLayout", layout), ("start", start), ("noAccess", noAccess), ("policies", policies), ("editor", editor), ("confirm", confirm),
        ("whatIf", whatIf), ("signIns", signIns), ("enrollments", enrollments), ("enrollment", enrollment), ("callbacks", callbacks),
        ("audit", audit), ("directory", directory), ("appConfiguration", appConfiguration), ("failure", failure), ("methods", methods),
        ("signals", signals), ("signalStream", signalStream), ("policyImport", policyImport), ("risk", risk),
    ]

    static let layout = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>{{title}} · Portcullis console</title>
        <link rel="stylesheet" href="{{basePath}}/admin/console.css">
        </head>
        <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="bar">
        <a class="brand" href="{{basePath}}/admin"><span class="mark" aria-hidden="true">▦</span> Portcullis</a>
        {{#signedIn}}<span class="who"><span class="tenant">{{tenantName}}</span> <span class="upn">{{upn}}</span></span>
        <form method="post" action="{{basePath}}/admin/signout" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="link">Sign out</button></form>{{/signedIn}}
        </header>
        {{#signedIn}}<nav aria-label="Console"><ul>{{#nav}}<li><a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a></li>{{/nav}}</ul></nav>{{/signedIn}}
        <main id="main">
        <h1>{{title}}</h1>
        {{#notice}}<div class="notice" role="status">{{notice}}</div>{{/notice}}
        {{#error}}<div class="alert" role="alert">{{error}}</div>{{/error}}
        {{{content}}}
        </main>
        <footer><p>Correlation ID: <span class="mono">{{correlationId}}</span></p></footer>
        </body>
        </html>

        """

    static let start = """
        <p class="lead">Sign in with an account that holds the Portcullis.Admin role.</p>
        <form method="get" action="{{basePath}}/admin/signin" class="narrow">
        <label for="tenant">Organization (domain or tenant ID)</label>
        <input id="tenant" name="tenant" type="text" autocomplete="organization" autocapitalize="none" spellcheck="false" required autofocus>
        <div class="actions"><button type="submit">Sign in</button></div>
        </form>

        """

    static let noAccess = """
        <p>The account <strong>{{upn}}</strong> does not hold the <span class="mono">Portcullis.Admin</span> role in {{tenantName}}, so the console shows nothing.</p>
        <p>Ask an administrator of this organization for the role, or sign in with another account.</p>
        <form method="post" action="{{basePath}}/admin/signout" class="actions"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="tenant" value="{{tenantId}}"><button type="submit">Sign in with another account</button></form>

        """

    static let policyImport = """
        <p>{{summary}}</p>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Policy</th><th scope="col">Result</th><th scope="col">Problems</th></tr></thead>
        <tbody>
        {{#rows}}<tr><td data-label="Policy">{{#href}}<a href="{{href}}">{{name}}</a>{{/href}}{{^href}}{{name}}{{/href}}</td>
        <td data-label="Result"><span class="state state-{{outcome}}">{{outcome}}</span></td>
        <td data-label="Problems">{{#problems}}<p class="mono wrap"><strong>{{pointer}}</strong> {{message}}</p>{{/problems}}{{^problems}}—{{/problems}}</td></tr>{{/rows}}
        </tbody></table></div>
        <p><a href="{{basePath}}/admin/policies">Back to the policies</a></p>

        """

    static let failure = """
        <p>{{message}}</p>
        {{#href}}<p><a href="{{href}}">{{link}}</a></p>{{/href}}

        """

    static let policies = """
        <section aria-labelledby="ca-title">
        <h2 id="ca-title">Conditional access</h2>
        <form method="get" action="{{basePath}}/admin/new/conditional-access" class="toolbar">
        <label for="ca-template">New policy from template</label>
        <select id="ca-template" name="template"><optgroup label="Portcullis">{{#caTemplates}}<option value="{{value}}">{{label}}</option>{{/caTemplates}}</optgroup>
        <optgroup label="Microsoft's templates">{{#msTemplates}}<option value="{{value}}">{{label}}</option>{{/msTemplates}}</optgroup></select>
        <button type="submit" class="small">Create…</button>
        </form>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Grant</th><th scope="col">Change state</th></tr></thead>
        <tbody>
        {{#ca}}<tr>
        <td data-label="Name"><a href="{{href}}">{{displayName}}</a></td>
        <td data-label="State"><span class="state state-{{state}}">{{stateLabel}}</span></td>
        <td data-label="Grant">{{controls}}</td>
        <td data-label="Change state"><form method="post" action="{{basePath}}/admin/policies/state" class="inline">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="id" value="{{id}}">
        <label class="visually-hidden" for="state-{{id}}">State of {{displayName}}</label>
        <select id="state-{{id}}" name="state">{{#states}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/states}}</select>
        <button type="submit" class="small">Set</button>
        </form></td>
        </tr>{{/ca}}
        {{^ca}}<tr><td colspan="4">No conditional-access policies.</td></tr>{{/ca}}
        </tbody></table></div>
        </section>
        <section aria-labelledby="import-title">
        <h2 id="import-title">Import from Entra</h2>
        <p>Paste policies as Graph exports them (one policy, or <code>{"value": [...]}</code>) and, to bring them from another directory, a map of its object IDs to this one's.</p>
        <form method="post" action="{{basePath}}/admin/policies/import">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="import-policies">Policies (JSON)</label>
        <textarea id="import-policies" name="policies" rows="8" spellcheck="false" required></textarea>
        <label for="import-map">ID map (JSON object, optional)</label>
        <textarea id="import-map" name="map" rows="4" spellcheck="false"></textarea>
        <p><input type="checkbox" id="import-report-only" name="reportOnly" value="1"> <label for="import-report-only" class="inline">Keep controls this server cannot enforce (cloudAppSecurity) in report-only policies</label></p>
        <div class="actions"><button type="submit">Import…</button></div>
        </form>
        </section>
        <section aria-labelledby="ap-title">
        <h2 id="ap-title">App protection</h2>
        <p class="toolbar"><a class="button small" href="{{basePath}}/admin/new/app-protection?template=basic">New app protection policy…</a></p>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Name</th><th scope="col">Apps</th><th scope="col">Groups</th></tr></thead>
        <tbody>
        {{#ap}}<tr><td data-label="Name"><a href="{{href}}">{{displayName}}</a></td><td data-label="Apps">{{apps}}</td><td data-label="Groups" class="wrap">{{groups}}</td></tr>{{/ap}}
        {{^ap}}<tr><td colspan="3">No app protection policies.</td></tr>{{/ap}}
        </tbody></table></div>
        </section>

        """

    static let editor = """
        <p class="lead">{{kindLabel}}{{#id}} · <span class="mono">{{id}}</span>{{/id}}{{#version}} · version {{version}}{{/version}}</p>
        {{#conflict}}<div class="alert" role="alert" id="conflict"><p>Someone else changed this {{noun}} after you opened it. Nothing was saved; your text is kept below.</p>
        <p><a href="{{reloadHref}}">Open their version</a>, then make your change again.</p></div>{{/conflict}}
        <form method="post" action="{{action}}">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="etag" value="{{etag}}">
        <div class="editor-grid{{#hasProblems}} with-problems{{/hasProblems}}">
        <div class="editor-text"><label for="document">Document (JSON)</label>
        <textarea id="document" name="document" rows="26" spellcheck="false" autocapitalize="none"{{#hasProblems}} aria-describedby="problems"{{/hasProblems}}>{{document}}</textarea></div>
        {{#hasProblems}}<aside id="problems" class="problems" aria-labelledby="problems-title">
        <h2 id="problems-title">Not saved: {{problemCount}} problem{{#plural}}s{{/plural}}</h2>
        <ul>{{#problems}}<li><code class="pointer">{{pointer}}</code> <span>{{message}}</span>{{#excerpt}}<pre class="excerpt">{{excerpt}}</pre>{{/excerpt}}</li>{{/problems}}</ul>
        </aside>{{/hasProblems}}
        </div>
        <div class="actions"><button type="submit">{{saveLabel}}</button>{{#deleteHref}}<a class="button secondary danger" href="{{deleteHref}}">Delete…</a>{{/deleteHref}}<a class="button secondary" href="{{backHref}}">Back</a></div>
        </form>

        """

    static let confirm = """
        <p>{{question}}</p>
        {{#detail}}<p class="note">{{detail}}</p>{{/detail}}
        <form method="post" action="{{action}}" class="actions">
        <input type="hidden" name="csrf" value="{{csrf}}">{{#etag}}<input type="hidden" name="etag" value="{{etag}}">{{/etag}}
        <button type="submit" class="danger">{{confirmLabel}}</button>
        <a class="button secondary" href="{{backHref}}">Cancel</a>
        </form>

        """

    static let whatIf = """
        <section aria-labelledby="wi-title">
        <h2 id="wi-title">What if this sign-in happened now?</h2>
        <form method="post" action="{{basePath}}/admin/what-if" class="grid-form">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <div><label for="user">User</label><select id="user" name="user"><option value="">(none: the app itself)</option>{{#users}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/users}}</select></div>
        <div><label for="app">App (client)</label><select id="app" name="app">{{#apps}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/apps}}</select></div>
        <div><label for="resource">Resource</label><select id="resource" name="resource">{{#resources}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/resources}}</select></div>
        <div><label for="platform">Platform</label><select id="platform" name="platform"><option value="">(unknown)</option>{{#platforms}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/platforms}}</select></div>
        <div><label for="ip">IP address</label><input id="ip" name="ip" type="text" value="{{ip}}" placeholder="203.0.113.7" spellcheck="false"></div>
        <div><label for="contexts">Authentication contexts</label><input id="contexts" name="contexts" type="text" value="{{contexts}}" placeholder="c1" spellcheck="false"></div>
        <div><label for="protection">App protection</label><select id="protection" name="protection">{{#protections}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/protections}}</select></div>
        <fieldset><legend>Client</legend>
        <label class="check"><input type="checkbox" name="protapp" value="1"{{#protapp}} checked{{/protapp}}> declares <span class="mono">protapp</span></label>
        <label class="check"><input type="checkbox" name="mfa" value="1"{{#mfa}} checked{{/mfa}}> signed in with MFA</label>
        <label class="check"><input type="checkbox" name="deviceCode" value="1"{{#deviceCode}} checked{{/deviceCode}}> through the device code flow</label>
        <label class="check"><input type="checkbox" name="dpop" value="1"{{#dpop}} checked{{/dpop}}> sends a DPoP proof (bound tokens)</label>
        </fieldset>
        <div class="actions"><button type="submit">Evaluate</button></div>
        </form>
        {{#hasProblems}}<div class="alert" role="alert"><ul>{{#problems}}<li><code class="pointer">{{pointer}}</code> {{message}}</li>{{/problems}}</ul></div>{{/hasProblems}}
        {{#result}}<div class="result" id="decision">
        <p class="decision decision-{{status}}"><strong>{{statusLabel}}</strong>{{#error}} — <span class="mono">{{error}}</span>{{/error}}{{#suberror}} <span class="mono">{{suberror}}</span>{{/suberror}}{{#errorCode}} (AADSTS{{errorCode}}){{/errorCode}}</p>
        {{#contexts}}<p>Authentication contexts: <span class="mono">{{contexts}}</span></p>{{/contexts}}
        <div class="scroll"><table>
        <thead><tr><th scope="col">Policy</th><th scope="col">Result</th><th scope="col">Why</th></tr></thead>
        <tbody>{{#policies}}<tr><td data-label="Policy">{{displayName}}</td><td data-label="Result"><span class="result-{{result}}">{{result}}</span></td><td data-label="Why">{{why}}</td></tr>{{/policies}}
        {{^policies}}<tr><td colspan="3">No policy applies.</td></tr>{{/policies}}</tbody></table></div>
        </div>{{/result}}
        </section>
        <section aria-labelledby="impact-title">
        <h2 id="impact-title">Impact of a draft</h2>
        <p class="note">Replays the last week's sign-ins (up to 1,000) against this draft conditional-access policy (a JSON object, or an array of them) in place of the current ones: who would newly be refused or allowed.</p>
        <form method="post" action="{{basePath}}/admin/what-if/impact">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="draft">Draft policy (JSON)</label>
        <textarea id="draft" name="draft" rows="12" spellcheck="false">{{draft}}</textarea>
        <div class="actions"><button type="submit">Show impact</button></div>
        </form>
        {{#hasImpactProblems}}<div class="alert" role="alert"><ul>{{#impactProblems}}<li><code class="pointer">{{pointer}}</code> {{message}}</li>{{/impactProblems}}</ul></div>{{/hasImpactProblems}}
        {{#impact}}<div class="result" id="impact">
        <p><strong>{{evaluated}}</strong> sign-ins replayed: <strong>{{newlyRefused}}</strong> newly refused, <strong>{{newlyAllowed}}</strong> newly allowed, {{changed}} changed otherwise, {{unchanged}} unchanged.</p>
        <div class="scroll"><table><thead><tr><th scope="col">When</th><th scope="col">User</th><th scope="col">App</th><th scope="col">Before</th><th scope="col">After</th></tr></thead>
        <tbody>{{#changes}}<tr><td data-label="When">{{at}}</td><td data-label="User">{{user}}</td><td data-label="App" class="mono wrap">{{app}}</td><td data-label="Before">{{before}}</td><td data-label="After">{{after}}</td></tr>{{/changes}}</tbody></table></div>
        </div>{{/impact}}
        </section>

        """

    static let signIns = """
        <form method="get" action="{{basePath}}/admin/sign-ins" class="filters">
        <div><label for="f-user">User</label><input id="f-user" name="user" type="text" value="{{filter_user}}" spellcheck="false"></div>
        <div><label for="f-app">App ID</label><input id="f-app" name="app" type="text" value="{{filter_app}}" spellcheck="false"></div>
        <div><label for="f-status">Status</label><select id="f-status" name="status">{{#statuses}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/statuses}}</select></div>
        <div><label for="f-correlation">Correlation ID</label><input id="f-correlation" name="correlationId" type="text" value="{{filter_correlationId}}" spellcheck="false"></div>
        <div class="actions"><button type="submit" class="small">Filter</button></div>
        </form>
        <div class="scroll"><table class="records">
        <thead><tr><th scope="col">When (UTC)</th><th scope="col">User</th><th scope="col">App</th><th scope="col">Status</th><th scope="col">Details</th></tr></thead>
        <tbody>
        {{#records}}<tr>
        <td data-label="When (UTC)" class="nowrap">{{at}}{{#aggregate}}<br><span class="muted">to {{lastAt}}</span>{{/aggregate}}</td><td data-label="User">{{user}}</td><td data-label="App" class="mono wrap">{{app}}</td>
        <td data-label="Status"><span class="result-{{status}}">{{statusLabel}}</span>{{#aggregate}} <span class="count">× {{count}}</span>{{/aggregate}}{{#errorCode}} <span class="mono">AADSTS{{errorCode}}</span>{{/errorCode}}</td>
        <td data-label="Details"><details><summary>{{policyCount}} polic{{#onePolicy}}y{{/onePolicy}}{{^onePolicy}}ies{{/onePolicy}} · <span class="mono">{{correlationId}}</span></summary>
        <dl class="facts"><dt>Sign-in</dt><dd>{{kind}}</dd><dt>Correlation ID</dt><dd class="mono">{{correlationId}}{{#aggregate}} (first), {{lastCorrelationId}} (last){{/aggregate}}</dd><dt>Resource</dt><dd>{{resource}}</dd><dt>Grant</dt><dd>{{grantType}}</dd><dt>Platform</dt><dd>{{platform}}</dd><dt>IP address</dt><dd>{{ip}}</dd>{{#country}}<dt>Country</dt><dd>{{country}}</dd>{{/country}}<dt>App protection</dt><dd>{{appProtection}}</dd>{{#tokenBinding}}<dt>Token</dt><dd>{{tokenBinding}}</dd>{{/tokenBinding}}{{#contexts}}<dt>Authentication contexts</dt><dd class="mono">{{contexts}}</dd>{{/contexts}}</dl>
        {{#hasPolicies}}<table class="inner"><thead><tr><th scope="col">Policy</th><th scope="col">Result</th><th scope="col">Why</th></tr></thead>
        <tbody>{{#policies}}<tr><td data-label="Policy">{{displayName}}</td><td data-label="Result">{{result}}</td><td data-label="Why">{{why}}</td></tr>{{/policies}}</tbody></table>{{/hasPolicies}}
        {{^hasPolicies}}<p class="muted">No policy applied (policies that did not apply are not kept).</p>{{/hasPolicies}}
        </details></td>
        </tr>{{/records}}
        {{^records}}<tr><td colspan="5">No sign-ins match.</td></tr>{{/records}}
        </tbody></table></div>
        {{#older}}<p class="pager"><a href="{{older}}" rel="next">Older sign-ins →</a></p>{{/older}}

        """

    static let enrollments = """
        <form method="get" action="{{basePath}}/admin/enrollments" class="filters">
        <div><label for="f-account">Account</label><input id="f-account" name="account" type="text" value="{{filter_account}}" spellcheck="false"></div>
        <div><label for="f-app">App ID</label><input id="f-app" name="app" type="text" value="{{filter_app}}" spellcheck="false"></div>
        <div><label for="f-status">Status</label><select id="f-status" name="status">{{#statuses}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/statuses}}</select></div>
        <div class="actions"><button type="submit" class="small">Filter</button></div>
        </form>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Account</th><th scope="col">App</th><th scope="col">Device</th><th scope="col">State</th><th scope="col">Last check-in (UTC)</th></tr></thead>
        <tbody>{{#enrollments}}<tr><td data-label="Account"><a href="{{href}}">{{upn}}</a></td><td data-label="App" class="mono wrap">{{app}}</td><td data-label="Device" class="mono wrap">{{device}}</td><td data-label="State"><span class="state state-{{state}}">{{state}}</span></td><td data-label="Last check-in (UTC)" class="nowrap">{{lastCheckIn}}</td></tr>{{/enrollments}}
        {{^enrollments}}<tr><td colspan="5">No enrollments match.</td></tr>{{/enrollments}}</tbody></table></div>
        {{#pager}}<p class="pager">{{#previous}}<a href="{{previous}}" rel="prev">← Newer</a> {{/previous}}{{#next}}<a href="{{next}}" rel="next">Older →</a>{{/next}}</p>{{/pager}}

        """

    static let enrollment = """
        <dl class="facts wide">
        <dt>Account</dt><dd>{{upn}}</dd><dt>App</dt><dd>{{app}}</dd><dt>Device</dt><dd class="mono">{{device}}</dd><dt>Platform</dt><dd>{{platform}} {{osVersion}}</dd>
        <dt>State</dt><dd><span class="state state-{{state}}">{{state}}</span> — {{status}}</dd><dt>Enrolled (UTC)</dt><dd>{{enrolledAt}}</dd><dt>Last check-in (UTC)</dt><dd>{{lastCheckIn}}</dd>
        <dt>Policy applied</dt><dd class="mono">{{appliedPolicyVersion}}</dd>
        </dl>
        {{#canWipe}}<p class="actions"><a class="button danger" href="{{wipeHref}}">Wipe…</a></p>{{/canWipe}}
        <h2>History</h2>
        <div class="scroll"><table><thead><tr><th scope="col">When (UTC)</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Detail</th></tr></thead>
        <tbody>{{#history}}<tr><td data-label="When (UTC)" class="nowrap">{{at}}</td><td data-label="Event">{{event}}</td><td data-label="Status">{{change}}</td><td data-label="Detail" class="mono wrap">{{detail}}</td></tr>{{/history}}</tbody></table></div>

        """

    static let callbacks = """
        <nav aria-label="Callback states" class="tabs"><ul>{{#tabs}}<li><a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a></li>{{/tabs}}</ul></nav>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Created (UTC)</th><th scope="col">Target</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col"></th></tr></thead>
        <tbody>{{#messages}}<tr><td data-label="Created (UTC)" class="nowrap">{{createdAt}}</td><td data-label="Target" class="mono wrap">{{target}}</td><td data-label="Attempts">{{attempts}}</td><td data-label="Last error">{{lastError}}</td>
        <td>{{#canRedeliver}}<form method="post" action="{{redeliverAction}}" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="small">Redeliver</button></form>{{/canRedeliver}}</td></tr>{{/messages}}
        {{^messages}}<tr><td colspan="5">Nothing here.</td></tr>{{/messages}}</tbody></table></div>
        {{#pager}}<p class="pager">{{#previous}}<a href="{{previous}}" rel="prev">← Newer</a> {{/previous}}{{#next}}<a href="{{next}}" rel="next">Older →</a>{{/next}}</p>{{/pager}}

        """

    static let audit = """
        <div class="scroll"><table>
        <thead><tr><th scope="col">When (UTC)</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Change</th></tr></thead>
        <tbody>{{#records}}<tr><td data-label="When (UTC)" class="nowrap">{{at}}</td><td data-label="Who">{{actor}}</td><td data-label="What">{{action}} {{kind}} <span class="mono wrap">{{documentId}}</span></td>
        <td data-label="Change">{{#hasDiff}}<details><summary>{{diffCount}} change{{#plural}}s{{/plural}}</summary><pre class="diff">{{#diff}}<span class="diff-{{sign}}">{{line}}</span>
        {{/diff}}</pre></details>{{/hasDiff}}</td></tr>{{/records}}
        {{^records}}<tr><td colspan="4">No changes recorded.</td></tr>{{/records}}</tbody></table></div>
        {{#older}}<p class="pager"><a href="{{older}}" rel="next">Older changes →</a></p>{{/older}}

        """

    static let directory = """
        {{#sections}}<section aria-labelledby="{{slug}}-title">
        <h2 id="{{slug}}-title">{{title}}</h2>
        <p class="toolbar"><a class="button small" href="{{newHref}}">New {{noun}}…</a></p>
        <div class="scroll"><table><thead><tr><th scope="col">Name</th><th scope="col">ID</th><th scope="col">{{detailTitle}}</th></tr></thead>
        <tbody>{{#rows}}<tr><td data-label="Name"><a href="{{href}}">{{name}}</a>{{#methodsHref}} · <a href="{{methodsHref}}">Sign-in methods</a>{{/methodsHref}}</td><td data-label="ID" class="mono wrap">{{id}}</td><td data-label="{{detailTitle}}">{{detail}}</td></tr>{{/rows}}
        {{^rows}}<tr><td colspan="3">None.</td></tr>{{/rows}}</tbody></table></div>
        </section>{{/sections}}

        """

    static let methods = """
        <p class="lead">{{upn}}</p>
        {{#issued}}<div class="issued" role="status" id="issued"><p>Temporary access pass: <strong class="mono" id="pass">{{pass}}</strong></p>
        <p>Usable {{usage}} until {{until}} UTC, in place of the password on the sign-in page.</p></div>{{/issued}}
        <div class="scroll"><table><thead><tr><th scope="col">Method</th><th scope="col">Kind</th><th scope="col">Added (UTC)</th><th scope="col">Last used (UTC)</th><th scope="col">State</th><th scope="col"></th></tr></thead>
        <tbody>{{#methods}}<tr><td data-label="Method">{{name}}</td><td data-label="Kind" class="wrap">{{kind}}</td><td data-label="Added (UTC)" class="nowrap">{{created}}</td><td data-label="Last used (UTC)" class="nowrap">{{lastUsed}}</td><td data-label="State">{{state}}</td>
        <td>{{#suspect}}<form method="post" action="{{clearAction}}" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="methodId" value="{{id}}"><button type="submit" class="small">Clear suspicion</button></form> {{/suspect}}<form method="post" action="{{removeAction}}" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="methodId" value="{{id}}"><button type="submit" class="small danger">Remove</button></form></td></tr>{{/methods}}
        {{^methods}}<tr><td colspan="6">No sign-in method besides the password.</td></tr>{{/methods}}</tbody></table></div>
        <h2>Temporary access pass</h2>
        <form method="post" action="{{passAction}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><label for="lifetime">Lifetime (minutes, {{minimumLifetime}}–{{maximumLifetime}})</label>
        <input id="lifetime" name="lifetimeInMinutes" type="number" min="{{minimumLifetime}}" max="{{maximumLifetime}}" value="{{defaultLifetime}}" required></p>
        <p><label><input type="checkbox" name="isUsableOnce" value="true" checked> Usable once</label></p>
        <p class="actions"><button type="submit">Issue a temporary access pass</button></p>
        </form>
        <p class="note">A new pass replaces the user's current one. The user signs in with it instead of the password, then adds a passkey or an authenticator app on Security info.</p>
        <h2>Sessions</h2>
        <p>Ends every refresh token and browser session of the user now. Resources that receive Shared Signals refuse the user's access tokens within seconds; the user signs in again.</p>
        <form method="post" action="{{revokeAction}}" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger">Revoke sign-in sessions</button></form>
        <form method="post" action="{{revokeAction}}" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="compromised" value="true"><button type="submit" class="danger">Confirm compromised</button></form>
        <p class="note">Confirm compromised also tells receivers that the user's credentials are compromised (RISC <span class="mono">credential-compromise</span>).</p>
        <p><a href="{{backHref}}">Back to the directory</a></p>

        """

    static let signals = """
        <p class="lead">Receivers of this organization's security events (OpenID Shared Signals): resources that end access when a user is disabled, their sessions are revoked or their device is wiped. A receiver creates its stream itself, with a token for <span class="mono">api://portcullis-ssf</span> and the <span class="mono">SSF.Receiver</span> role; its configuration is at <span class="mono wrap">{{metadata}}</span>.</p>
        <div class="scroll"><table><thead><tr><th scope="col">Receiver</th><th scope="col">Delivery</th><th scope="col">Status</th><th scope="col">Events</th><th scope="col">Waiting</th><th scope="col">Created (UTC)</th></tr></thead>
        <tbody>{{#streams}}<tr><td data-label="Receiver"><a href="{{href}}">{{receiver}}</a>{{#description}}<br><small>{{description}}</small>{{/description}}</td><td data-label="Delivery" class="wrap">{{delivery}}</td><td data-label="Status">{{status}}{{#statusReason}}: {{statusReason}}{{/statusReason}}</td><td data-label="Events">{{eventCount}}</td><td data-label="Waiting">{{pending}}</td><td data-label="Created (UTC)" class="nowrap">{{created}}</td></tr>{{/streams}}
        {{^streams}}<tr><td colspan="6">No receiver has created a stream.</td></tr>{{/streams}}</tbody></table></div>

        """

    static let signalStream = """
        <p class="lead">{{receiver}} <span class="mono">{{receiverAppId}}</span></p>
        <dl class="facts"><dt>Stream</dt><dd class="mono">{{id}}</dd><dt>Audience</dt><dd class="mono wrap">{{audience}}</dd><dt>Delivery</dt><dd class="wrap">{{delivery}}</dd>
        <dt>Status</dt><dd>{{status}}{{#statusReason}}: {{statusReason}}{{/statusReason}}</dd><dt>Waiting</dt><dd>{{pending}} event(s)</dd><dt>Subjects removed</dt><dd>{{removedSubjects}}</dd><dt>Created (UTC)</dt><dd>{{created}}</dd>
        {{#description}}<dt>Description</dt><dd>{{description}}</dd>{{/description}}</dl>
        <h2>Events delivered</h2>
        <ul class="mono">{{#events}}<li>{{.}}</li>{{/events}}</ul>
        <h2>Status</h2>
        <form method="post" action="{{statusAction}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><label for="status">Status</label> <select id="status" name="status">{{#statuses}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/statuses}}</select></p>
        <p><label for="reason">Reason (optional)</label> <input id="reason" name="reason" type="text" maxlength="256"></p>
        <p class="actions"><button type="submit">Set status</button></p>
        </form>
        <p class="note">Paused: events are kept (up to the stream's limit) and delivered on resuming. Disabled: events are not kept.</p>
        <h2>Last deliveries</h2>
        <div class="scroll"><table><thead><tr><th scope="col">Created (UTC)</th><th scope="col">Event</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Delivered (UTC)</th><th scope="col">Last error</th></tr></thead>
        <tbody>{{#deliveries}}<tr><td data-label="Created (UTC)" class="nowrap">{{createdAt}}</td><td data-label="Event" class="mono">{{event}}</td><td data-label="State">{{state}}</td><td data-label="Attempts">{{attempts}}</td><td data-label="Delivered (UTC)" class="nowrap">{{deliveredAt}}</td><td data-label="Last error" class="wrap">{{lastError}}</td></tr>{{/deliveries}}
        {{^deliveries}}<tr><td colspan="6">No event yet.</td></tr>{{/deliveries}}</tbody></table></div>
        <h2>Delete</h2>
        <form method="post" action="{{deleteAction}}"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger">Delete the stream</button></form>
        <p class="note">The receiver stops receiving events, and the events waiting for it are dropped. It may create a new stream.</p>
        <p><a href="{{backHref}}">Back to the streams</a></p>

        """

    static let risk = """
        <p class="lead">Users and workload identities whose risk was recorded: detections from sign-ins (anonymizers, unfamiliar properties, atypical travel, password spray, new networks), and reports. Conditional access decides on their risk; confirming a user compromised also ends every session and refresh token of theirs.</p>
        <h2>Risky users</h2>
        <div class="scroll"><table><thead><tr><th scope="col">User</th><th scope="col">Risk</th><th scope="col">State</th><th scope="col">Updated (UTC)</th><th scope="col">Decide</th></tr></thead>
        <tbody>{{#users}}<tr><td data-label="User">{{name}}<br><small class="mono">{{upn}}</small></td><td data-label="Risk"><span class="risk risk-{{level}}">{{level}}</span></td><td data-label="State">{{state}}{{#detail}}<br><small>{{detail}}</small>{{/detail}}</td><td data-label="Updated (UTC)" class="nowrap">{{updated}}</td>
        <td data-label="Decide"><form method="post" action="{{action}}" class="inline"><input type="hidden" name="csrf" value="{{csrf}}">{{#open}}<button type="submit" name="decision" value="dismiss" class="small secondary">Dismiss</button> {{/open}}{{^compromised}}<button type="submit" name="decision" value="confirmCompromised" class="small danger">Confirm compromised</button>{{/compromised}}</form></td></tr>{{/users}}
        {{^users}}<tr><td colspan="5">No user's risk has been recorded.</td></tr>{{/users}}</tbody></table></div>
        <h2>Risky workload identities</h2>
        <div class="scroll"><table><thead><tr><th scope="col">Application</th><th scope="col">Risk</th><th scope="col">State</th><th scope="col">Updated (UTC)</th><th scope="col">Decide</th></tr></thead>
        <tbody>{{#principals}}<tr><td data-label="Application">{{name}}<br><small class="mono">{{appId}}</small></td><td data-label="Risk"><span class="risk risk-{{level}}">{{level}}</span></td><td data-label="State">{{state}}</td><td data-label="Updated (UTC)" class="nowrap">{{updated}}</td>
        <td data-label="Decide"><form method="post" action="{{action}}" class="inline"><input type="hidden" name="csrf" value="{{csrf}}">{{#open}}<button type="submit" name="decision" value="dismiss" class="small secondary">Dismiss</button>{{/open}}</form></td></tr>{{/principals}}
        {{^principals}}<tr><td colspan="5">No workload identity's risk has been recorded.</td></tr>{{/principals}}</tbody></table></div>
        <h2>Detections</h2>
        <div class="scroll"><table><thead><tr><th scope="col">Detected (UTC)</th><th scope="col">Detection</th><th scope="col">Who</th><th scope="col">Level</th><th scope="col">State</th><th scope="col">Address</th></tr></thead>
        <tbody>{{#detections}}<tr><td data-label="Detected (UTC)" class="nowrap">{{detected}}</td><td data-label="Detection"><span class="mono">{{type}}</span>{{#info}}<br><small>{{info}}</small>{{/info}}</td><td data-label="Who" class="wrap">{{who}}</td><td data-label="Level">{{level}}</td><td data-label="State">{{state}}</td><td data-label="Address" class="mono">{{address}}</td></tr>{{/detections}}
        {{^detections}}<tr><td colspan="6">No detection yet.</td></tr>{{/detections}}</tbody></table></div>

        """

    static let appConfiguration = """
        <p class="toolbar"><a class="button small" href="{{basePath}}/admin/new/app-configuration?template=basic">New app configuration policy…</a></p>
        <div class="scroll"><table><thead><tr><th scope="col">Name</th><th scope="col">Priority</th><th scope="col">Apps</th><th scope="col">Secrets</th></tr></thead>
        <tbody>{{#policies}}<tr><td data-label="Name"><a href="{{href}}">{{displayName}}</a></td><td data-label="Priority">{{priority}}</td><td data-label="Apps">{{apps}}</td><td data-label="Secrets" class="wrap">{{secrets}}</td></tr>{{/policies}}
        {{^policies}}<tr><td colspan="4">No app configuration policies.</td></tr>{{/policies}}</tbody></table></div>

        """

    static let stylesheet = """
        :root { color-scheme: light; --ink: #1b1f24; --muted: #4a5360; --line: #c9cfd6; --accent: #0a58b5; --accent-ink: #fff;
                --danger: #a4161a; --danger-bg: #fdecec; --ok: #136c2e; --ok-bg: #e7f5ec; --warn: #7a4b00; --warn-bg: #fff4dc; --page: #f4f6f9; }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--page); color: var(--ink); font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
        .skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: .5rem; background: #fff; padding: .25rem .5rem; z-index: 2; }
        .bar { display: flex; align-items: center; gap: 1rem; flex-wrap: wrap; padding: .6rem 1.25rem; background: #fff; border-bottom: 1px solid var(--line); }
        .brand { font-weight: 700; color: var(--ink); text-decoration: none; } .brand .mark { color: var(--accent); }
        .who { margin-left: auto; color: var(--muted); font-size: .9rem; display: flex; gap: .5rem; flex-wrap: wrap; } .who .tenant { font-weight: 600; color: var(--ink); }
        nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem; }
        body > nav { background: #fff; border-bottom: 1px solid var(--line); padding: 0 1rem; }
        body > nav a { display: inline-block; padding: .6rem .75rem; color: var(--ink); text-decoration: none; border-bottom: 3px solid transparent; }
        body > nav a[aria-current=page] { border-bottom-color: var(--accent); font-weight: 600; }
        body > nav a:hover { color: var(--accent); }
        main { max-width: 78rem; margin: 0 auto; padding: 1.25rem; }
        h1 { font-size: 1.6rem; margin: .5rem 0 1rem; } h2 { font-size: 1.2rem; margin: 1.75rem 0 .75rem; }
        section:first-of-type h2 { margin-top: .5rem; }
        .lead { color: var(--muted); margin-top: -.5rem; overflow-wrap: anywhere; }
        h1, li, p { overflow-wrap: anywhere; } td { overflow-wrap: break-word; }
        a { color: var(--accent); }
        table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
        th, td { text-align: left; vertical-align: top; padding: .5rem .65rem; border-bottom: 1px solid var(--line); }
        th { background: #eef1f5; font-size: .875rem; }
        table.inner { margin-top: .5rem; font-size: .9rem; }
        .scroll { overflow-x: auto; position: relative; }
        .mono, code, pre, textarea { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
        .wrap { overflow-wrap: anywhere; word-break: break-all; } .nowrap { white-space: nowrap; }
        label { display: block; font-weight: 600; margin: .75rem 0 .3rem; } label.inline { display: inline; font-weight: 400; }
        label.check { font-weight: 400; display: flex; gap: .5rem; align-items: center; margin: .35rem 0; }
        input[type=text], select, textarea { font: inherit; padding: .5rem .6rem; border: 1px solid #7a8594; border-radius: .4rem; background: #fff; color: var(--ink); max-width: 100%; }
        input[type=text], textarea { width: 100%; } textarea { font-size: .875rem; line-height: 1.45; }
        input:focus-visible, select:focus-visible, textarea:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
        button, .button { display: inline-block; font: inherit; font-weight: 600; padding: .55rem 1.1rem; border-radius: .4rem; border: 1px solid var(--accent);
                          background: var(--accent); color: var(--accent-ink); cursor: pointer; text-decoration: none; min-height: 2.5rem; }
        button:hover, .button:hover { background: #084a99; color: #fff; }
        .secondary { background: #fff; color: var(--accent); }
        .danger { border-color: var(--danger); background: var(--danger); color: #fff; } .secondary.danger { background: #fff; color: var(--danger); }
        .small { padding: .3rem .7rem; min-height: 2.1rem; font-size: .9rem; }
        button.link { background: none; border: none; color: var(--accent); padding: 0; min-height: 0; font-weight: 400; text-decoration: underline; }
        .inline { display: inline-flex; gap: .4rem; align-items: center; flex-wrap: wrap; margin: 0; }
        .actions { display: flex; gap: .6rem; flex-wrap: wrap; margin: 1rem 0; align-items: center; }
        .toolbar { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; margin: .25rem 0 .75rem; } .toolbar label { margin: 0; }
        .filters, .grid-form { display: grid; grid-template-columns: repeat(auto-fill, minmax(13rem, 1fr)); gap: 0 1rem; align-items: end; margin-bottom: 1rem; }
        .filters .actions, .grid-form .actions, .grid-form fieldset { grid-column: 1 / -1; }
        fieldset { border: 1px solid var(--line); border-radius: .4rem; margin: .75rem 0 0; } legend { font-weight: 600; }
        .narrow { max-width: 26rem; }
        .notice { background: var(--ok-bg); color: var(--ok); border: 1px solid #9fd1b0; padding: .6rem .9rem; border-radius: .4rem; margin-bottom: 1rem; }
        .alert { background: var(--danger-bg); color: var(--danger); border: 1px solid #e3a0a2; padding: .6rem .9rem; border-radius: .4rem; margin-bottom: 1rem; }
        .alert p, .alert ul { margin: .2rem 0; }
        .editor-grid { display: grid; grid-template-columns: 1fr; gap: 1rem; }
        .editor-grid.with-problems { grid-template-columns: minmax(0, 3fr) minmax(14rem, 2fr); }
        .problems { background: var(--danger-bg); border: 1px solid #e3a0a2; border-radius: .4rem; padding: .75rem 1rem; color: var(--danger); align-self: start; }
        .problems h2 { margin: 0 0 .5rem; font-size: 1rem; } .problems ul { margin: 0; padding-left: 1.1rem; } .problems li { margin: .4rem 0; }
        .pointer { background: #fff; border: 1px solid #e3a0a2; border-radius: .25rem; padding: 0 .3rem; color: var(--ink); }
        .excerpt { margin: .3rem 0 0; padding: .3rem .5rem; background: #fff; color: var(--ink); border-radius: .25rem; font-size: .8rem; white-space: pre-wrap; overflow-wrap: anywhere; }
        .state { display: inline-block; padding: 0 .5rem; border-radius: 1rem; font-size: .85rem; border: 1px solid var(--line); background: #fff; white-space: nowrap; }
        .state-enabled, .state-compliant { background: var(--ok-bg); color: var(--ok); border-color: #9fd1b0; }
        .state-enabledForReportingButNotEnforced, .state-pending, .state-lapsed { background: var(--warn-bg); color: var(--warn); border-color: #e8c77f; }
        .state-disabled, .state-unenrolled { color: var(--muted); } .state-wipePending, .state-notCompliant { background: var(--danger-bg); color: var(--danger); border-color: #e3a0a2; }
        .result-success, .result-notApplied { color: var(--ok); } .result-failure { color: var(--danger); font-weight: 600; } .result-reportOnlyFailure { color: var(--warn); }
        .muted { color: var(--muted); font-size: .85rem; } .count { display: inline-block; padding: 0 .4rem; border-radius: 1rem; border: 1px solid var(--line); background: #fff; font-size: .85rem; white-space: nowrap; }
        .decision { font-size: 1.1rem; padding: .6rem .9rem; border-radius: .4rem; border: 1px solid var(--line); background: #fff; }
        .decision-failure { border-color: #e3a0a2; background: var(--danger-bg); color: var(--danger); } .decision-success, .decision-notApplied { border-color: #9fd1b0; background: var(--ok-bg); color: var(--ok); }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: .5rem 0; font-size: .9rem; } dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
        dl.facts.wide { font-size: 1rem; background: #fff; border: 1px solid var(--line); border-radius: .4rem; padding: .75rem 1rem; }
        details summary { cursor: pointer; color: var(--accent); }
        pre.diff { margin: .4rem 0 0; font-size: .8rem; white-space: pre-wrap; overflow-wrap: anywhere; } .diff-plus { color: var(--ok); } .diff-minus { color: var(--danger); } .diff-change { color: var(--warn); }
        .pager { margin: 1rem 0; } .note { color: var(--muted); font-size: .9rem; }
        .issued { background: var(--ok-bg); border: 1px solid var(--ok); border-radius: 6px; padding: .5rem 1rem; margin: 0 0 1rem; }
        .issued strong { font-size: 1.35rem; letter-spacing: .08em; }
        .tabs ul { display: flex; gap: .25rem; list-style: none; padding: 0; margin: 0 0 1rem; border-bottom: 1px solid var(--line); }
        .tabs a { display: inline-block; padding: .4rem .8rem; text-decoration: none; border-bottom: 3px solid transparent; } .tabs a[aria-current=page] { border-bottom-color: var(--accent); font-weight: 600; }
        .visually-hidden { position: absolute; left: 0; top: 0; width: 1px; height: 1px; margin: -1px; padding: 0; border: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
        footer { max-width: 78rem; margin: 0 auto; padding: 1rem 1.25rem 2rem; color: var(--muted); font-size: .75rem; } footer p { margin: 0; }
        @media (max-width: 40rem) {
          main { padding: .9rem; } .bar { padding: .5rem .9rem; } body > nav { padding: 0 .4rem; } body > nav a { padding: .45rem .5rem; }
          .editor-grid.with-problems { grid-template-columns: 1fr; } .who { margin-left: 0; width: 100%; }
          h1 { font-size: 1.35rem; }
          /* Tables become one card per row, each value under its column's name. */
          .scroll > table, .scroll > table > tbody, .scroll > table > tbody > tr, .scroll > table > tbody > tr > td { display: block; width: 100%; }
          .scroll > table > thead { position: absolute; left: -9999px; }
          .scroll > table > tbody > tr { border-bottom: 2px solid var(--line); padding: .35rem 0; }
          .scroll > table > tbody > tr > td { border: none; padding: .2rem .65rem; }
          .scroll > table > tbody > tr > td[data-label]::before { content: attr(data-label); display: block; font-size: .75rem; font-weight: 600; color: var(--muted); }
          table.inner th, table.inner td { padding: .3rem .35rem; }
        }

        """
}
