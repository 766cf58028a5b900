/// The Mustache templates of the sign-in pages and their stylesheet (PROTOCOL §9.2). `{{…}}` is escaped by
/// the engine; `{{{content}}}` (the layout's body) is the only unescaped value, and it is our own rendered
/// template.
enum PageTemplates {
    static let all: [(String, String)] = [
        ("layout", layout), ("signin", signIn), ("message", message), ("formPost", formPost), ("deviceCode", deviceCode), ("account", account),
        ("factor", factor),
    ]

    static let layout = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>{{title}} · Portcullis</title>
        <link rel="stylesheet" href="{{basePath}}/static/portcullis.css">
        </head>
        <body>
        <main class="card" aria-labelledby="title">
        <p class="brand"><span class="mark" aria-hidden="true">▦</span> Portcullis{{#tenantName}}<span class="tenant">{{tenantName}}</span>{{/tenantName}}</p>
        <h1 id="title">{{title}}</h1>
        {{{content}}}
        </main>
        <footer><p>Correlation ID: <span class="mono">{{correlationId}}</span></p></footer>
        </body>
        </html>

        """

    static let signIn = """
        <p class="lead">to continue to <strong>{{appName}}</strong></p>
        {{#error}}<div class="alert" role="alert" id="error"><p>{{message}}</p><p class="code">AADSTS{{code}}</p></div>{{/error}}
        <form method="post" action="{{action}}" novalidate>
        <input type="hidden" name="ticket" value="{{ticket}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="username">Email or user name</label>
        <input id="username" name="username" type="text" inputmode="email" autocomplete="username" autocapitalize="none" spellcheck="false" value="{{loginHint}}" required{{#focusUsername}} autofocus{{/focusUsername}}{{#error}} aria-describedby="error"{{/error}}>
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required{{^focusUsername}} autofocus{{/focusUsername}}>
        <div class="actions">
        <button type="submit" name="decision" value="allow">{{submitLabel}}</button>
        {{#canDeny}}<button type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny</button>{{/canDeny}}
        </div>
        </form>
        {{#note}}<p class="note">{{note}}</p>{{/note}}

        """

    /// The second factor (PROTOCOL §10): registration (the key as text and as an `otpauth://` link, then a
    /// first code) or the code alone.
    static let factor = """
        <p class="lead">{{upn}}</p>
        {{#error}}<div class="alert" role="alert" id="error"><p>{{message}}</p><p class="code">AADSTS{{code}}</p></div>{{/error}}
        <form method="post" action="{{action}}" novalidate>
        <input type="hidden" name="ticket" value="{{ticket}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#register}}
        <p>Your organization requires a second step to sign in. Add an account to an authenticator app (Microsoft Authenticator, Google Authenticator, 1Password and others) with this key, then enter the 6-digit code the app shows.</p>
        <p class="field-title" id="secret-label">Key</p>
        <p class="secret mono" id="secret" aria-labelledby="secret-label">{{secretGroups}}</p>
        <p class="note">On the device with the app, you can open this link instead: <a class="mono wrap" href="{{uri}}">{{uri}}</a></p>
        {{/register}}
        {{^register}}<p>Enter the 6-digit code from your authenticator app.</p>{{/register}}
        <label for="otp">Code</label>
        <input id="otp" name="otp" type="text" inputmode="numeric" pattern="[0-9 ]*" maxlength="8" autocomplete="one-time-code" spellcheck="false" required autofocus{{#error}} aria-describedby="error"{{/error}}>
        <div class="actions"><button type="submit">Verify</button></div>
        </form>

        """

    static let account = """
        <p class="lead">to continue to <strong>{{appName}}</strong></p>
        <form method="post" action="{{action}}">
        <input type="hidden" name="ticket" value="{{ticket}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <div class="accounts">
        <button type="submit" name="account" value="session" class="account" autofocus><span class="account-name">{{userName}}</span> <span class="account-upn">{{upn}}</span> <span class="account-note">Signed in</span></button>
        <button type="submit" name="account" value="other" class="secondary">Use another account</button>
        </div>
        </form>

        """

    static let deviceCode = """
        {{#error}}<div class="alert" role="alert" id="error"><p>{{message}}</p>{{#code}}<p class="code">AADSTS{{code}}</p>{{/code}}</div>{{/error}}
        <p class="lead">Enter the code shown by the app or device you want to sign in to.</p>
        <form method="post" action="{{action}}" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="user_code">Code</label>
        <input id="user_code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" value="{{userCode}}" required autofocus{{#error}} aria-describedby="error"{{/error}}>
        <div class="actions"><button type="submit">Next</button></div>
        </form>

        """

    static let message = """
        {{#alert}}<div class="alert" role="alert"><p>{{text}}</p>{{#code}}<p class="code">AADSTS{{code}}</p>{{/code}}</div>{{/alert}}
        {{^alert}}<p class="lead" role="status">{{text}}</p>{{/alert}}
        {{#detail}}<p class="note">{{detail}}</p>{{/detail}}

        """

    static let formPost = """
        <p class="lead">Signed in. Continue to the app.</p>
        <form method="post" action="{{redirectUri}}">
        {{#fields}}<input type="hidden" name="{{name}}" value="{{value}}">
        {{/fields}}<div class="actions"><button type="submit" autofocus>Continue</button></div>
        </form>

        """

    static let stylesheet = """
        :root { color-scheme: light; --ink: #1b1f24; --muted: #4a5360; --line: #c9cfd6; --accent: #0a58b5; --accent-ink: #ffffff;
                --danger: #a4161a; --danger-bg: #fdecec; --page: #eef1f5; --card: #ffffff; }
        * { box-sizing: border-box; }
        html { font-size: 100%; }
        body { margin: 0; min-height: 100vh; display: flex; flex-direction: column; align-items: center; justify-content: center;
               padding: 1.5rem 1rem; background: var(--page); color: var(--ink);
               font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
        .card { width: 100%; max-width: 26rem; background: var(--card); border: 1px solid var(--line); border-radius: 0.75rem;
                padding: 2rem 1.75rem; box-shadow: 0 1px 2px rgba(0,0,0,.06), 0 8px 24px rgba(0,0,0,.06); }
        .brand { margin: 0 0 1.25rem; font-weight: 600; letter-spacing: .01em; color: var(--muted); display: flex; align-items: center; gap: .4rem; flex-wrap: wrap; }
        .brand .mark { color: var(--accent); font-size: 1.2rem; }
        .tenant { margin-left: auto; font-weight: 400; font-size: .875rem; color: var(--muted); }
        h1 { margin: 0 0 .25rem; font-size: 1.5rem; line-height: 1.25; }
        .lead { margin: 0 0 1.5rem; color: var(--muted); }
        label { display: block; margin: 1rem 0 .35rem; font-weight: 600; }
        input[type=text], input[type=password] { width: 100%; padding: .7rem .8rem; font: inherit; color: var(--ink);
                border: 1px solid #7a8594; border-radius: .5rem; background: #fff; }
        input:focus-visible, button:focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
        .actions { display: flex; gap: .75rem; margin-top: 1.5rem; flex-wrap: wrap; }
        button { flex: 1 1 auto; min-height: 2.75rem; padding: .65rem 1.25rem; font: inherit; font-weight: 600; border-radius: .5rem;
                 border: 1px solid var(--accent); background: var(--accent); color: var(--accent-ink); cursor: pointer; }
        button:hover { background: #084a99; }
        button.secondary { background: #fff; color: var(--accent); }
        .alert { margin: 0 0 1.25rem; padding: .75rem 1rem; border-radius: .5rem; background: var(--danger-bg); color: var(--danger);
                 border: 1px solid #e3a0a2; }
        .alert p { margin: 0; }
        .code { font-size: .875rem; font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
        .alert .code { margin-top: .25rem; }
        .note { margin: 1.25rem 0 0; font-size: .875rem; color: var(--muted); }
        .accounts { display: flex; flex-direction: column; gap: .75rem; }
        button.account { display: flex; flex-direction: column; align-items: flex-start; text-align: left; background: #fff; color: var(--ink);
                         border: 1px solid var(--line); }
        button.account:hover { background: #f3f6fa; }
        .account-name { font-weight: 600; }
        .account-upn, .account-note { font-weight: 400; font-size: .875rem; color: var(--muted); }
        footer { margin-top: 1rem; font-size: .75rem; color: var(--muted); text-align: center; }
        footer p { margin: 0; }
        .field-title { margin: 1rem 0 .35rem; font-weight: 600; }
        .secret { margin: 0; padding: .7rem .8rem; border: 1px dashed #7a8594; border-radius: .5rem; background: #f6f8fa;
                  font-size: 1.05rem; letter-spacing: .06em; word-spacing: .3em; overflow-wrap: anywhere; }
        .wrap { overflow-wrap: anywhere; word-break: break-all; }
        a { color: var(--accent); }
        .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
        @media (max-width: 30rem) { body { justify-content: flex-start; padding-top: 1rem; } .card { padding: 1.5rem 1.1rem; } }

        """
}
