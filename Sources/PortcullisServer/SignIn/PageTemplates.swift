/// The Mustache templates of the sign-in pages and their stylesheet (PROTOCOL §9.2). `{{…}}` is escaped by
/// the engine; `{{{content}}}` (the layout's body) is the only unescaped value, and it is our own rendered
/// template.
enum PageTemplates {
    static let all: [(String, String)] = [
        ("layout", layout), ("signin", signIn), ("message", message), ("formPost", formPost), ("deviceCode", deviceCode), ("account", account),
        ("factor", factor), ("passkey", passkey), ("securityInfo", securityInfo), ("passkeyRegistration", passkeyRegistration), ("terms", terms),
        ("changePassword", changePassword),
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
        {{#script}}<script src="{{basePath}}/static/passkey.js" defer></script>
        {{/script}}        </head>
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
        <form method="post" action="{{action}}" id="signin-form" novalidate>
        <input type="hidden" name="ticket" value="{{ticket}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="username">Email or user name</label>
        <input id="username" name="username" type="text" inputmode="email" autocomplete="username webauthn" autocapitalize="none" spellcheck="false" value="{{loginHint}}" required{{#focusUsername}} autofocus{{/focusUsername}}{{#error}} aria-describedby="error"{{/error}}>
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required{{^focusUsername}} autofocus{{/focusUsername}}>
        <div class="actions">
        <button type="submit" name="decision" value="allow">{{submitLabel}}</button>
        {{#canDeny}}<button type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny</button>{{/canDeny}}
        </div>
        </form>
        {{#passkey}}
        <p class="alert" role="alert" id="passkey-error" hidden></p>
        <form method="post" action="{{action}}" id="passkey-assertion" data-challenge="{{challenge}}" data-rp-id="{{rpId}}" data-allow="{{allow}}">
        <input type="hidden" name="ticket" value="{{ticket}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="challenge" value="{{sealedChallenge}}">
        <div class="actions"><button type="button" class="secondary" data-passkey="signin" hidden>Sign in with a passkey</button></div>
        </form>
        {{/passkey}}
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

    /// Terms of use (PROTOCOL §17): the agreement in the user's language, Accept or Decline.
    static let terms = """
        <p class="lead">{{upn}}</p>
        {{#error}}<div class="alert" role="alert" id="error"><p>{{message}}</p></div>{{/error}}
        <h2 id="agreement">{{name}}</h2>
        <p>Your organization asks you to accept its terms of use to continue.</p>
        {{#text}}<pre class="terms" id="terms-text" tabindex="0" aria-labelledby="agreement" lang="{{language}}">{{text}}</pre>{{/text}}
        {{#pdf}}<p><a id="terms-file" href="{{href}}" target="_blank" rel="noopener">Open {{fileName}} (PDF)</a></p>{{/pdf}}
        {{#mustView}}<p class="note">Open and read the terms before you accept.</p>{{/mustView}}
        <form method="post" action="{{action}}">
        <input type="hidden" name="ticket" value="{{ticket}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <div class="actions"><button type="submit" name="decision" value="accept" id="accept">Accept</button>
        <button type="submit" name="decision" value="decline" id="decline" class="secondary">Decline</button></div>
        </form>

        """

    /// The secure password change of a risk policy (PROTOCOL §19).
    static let changePassword = """
        <p class="lead">{{upn}}</p>
        {{#error}}<div class="alert" role="alert" id="error"><p>{{message}}</p></div>{{/error}}
        <p>Your organization asks you to update your password: your account may be at risk. Choose a new password you have not used here.</p>
        <form method="post" action="{{action}}" id="password-form">
        <input type="hidden" name="ticket" value="{{ticket}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="new-password">New password</label>
        <input id="new-password" name="password" type="password" autocomplete="new-password" minlength="{{minimum}}" required autofocus{{#error}} aria-describedby="error"{{/error}}>
        <label for="confirm-password">Confirm the new password</label>
        <input id="confirm-password" name="confirm" type="password" autocomplete="new-password" minlength="{{minimum}}" required>
        <div class="actions"><button type="submit" id="change">Update password</button></div>
        </form>

        """

    /// User-name-first passkey sign-in, and the step a passkey-only authentication strength asks for (PROTOCOL §12).
    static let passkey = """
        <p class="lead">{{upn}}{{#appName}} · to continue to <strong>{{appName}}</strong>{{/appName}}</p>
        {{#error}}<div class="alert" role="alert" id="error"><p>{{message}}</p><p class="code">AADSTS{{code}}</p></div>{{/error}}
        {{#notice}}<p>{{notice}}</p>{{/notice}}
        <p class="alert" role="alert" id="passkey-error" hidden></p>
        {{#passkey}}
        <form method="post" action="{{action}}" id="passkey-assertion" data-challenge="{{challenge}}" data-rp-id="{{rpId}}" data-allow="{{allow}}">
        <input type="hidden" name="ticket" value="{{ticket}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="challenge" value="{{sealedChallenge}}">
        <input type="hidden" name="username" value="{{upn}}">
        <p>Use the passkey on this device or on your security key. Your browser asks you to confirm with your fingerprint, face or PIN.</p>
        <noscript><p class="note">Passkeys need JavaScript. Go back and sign in with your password.</p></noscript>
        <div class="actions"><button type="button" data-passkey="signin" hidden autofocus>Sign in with a passkey</button></div>
        </form>
        {{/passkey}}
        {{#securityInfo}}<p class="note">To add a passkey, open <a href="{{securityInfo}}">Security info</a> after signing in another way.</p>{{/securityInfo}}

        """

    /// A passkey registered in the sign-in itself (issue 43): a strength asks for a passkey the user does not have, and the
    /// way they signed in (a temporary access pass, say) lets them add one — then the sign-in goes on with it.
    static let passkeyRegistration = """
        <p class="lead">{{upn}}{{#appName}} · to continue to <strong>{{appName}}</strong>{{/appName}}</p>
        {{#error}}<div class="alert" role="alert" id="error"><p>{{message}}</p><p class="code">AADSTS{{code}}</p></div>{{/error}}
        <p>{{requirement}} Create a passkey now: your browser asks you to confirm with your fingerprint, face or PIN, or to use a security key. Then you go on to the app.</p>
        <p class="alert" role="alert" id="passkey-error" hidden></p>
        <form method="post" action="{{action}}" id="passkey-registration" data-challenge="{{challenge}}" data-rp-id="{{rpId}}" data-rp-name="{{rpName}}" data-user-id="{{userId}}" data-user-name="{{userName}}" data-user-display-name="{{userDisplayName}}" data-exclude="{{exclude}}">
        <input type="hidden" name="ticket" value="{{ticket}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="challenge" value="{{sealedChallenge}}">
        <label for="passkey-name">Name for your passkey</label>
        <input id="passkey-name" name="displayName" type="text" maxlength="64" placeholder="Passkey" autocomplete="off">
        <noscript><p class="note">Creating a passkey needs JavaScript.</p></noscript>
        <div class="actions"><button type="button" data-passkey="register" hidden autofocus>Create a passkey</button></div>
        </form>

        """

    /// Security info (PROTOCOL §12.1): the user's methods, each renamed or removed by a small form; "Add a passkey".
    static let securityInfo = """
        <p class="lead">{{upn}}</p>
        {{#error}}<div class="alert" role="alert" id="error"><p>{{message}}</p><p class="code">AADSTS{{code}}</p></div>{{/error}}
        {{#notice}}<p class="notice" role="status" id="notice">{{notice}}</p>{{/notice}}
        <h2>Sign-in methods</h2>
        {{^hasMethods}}<p>You have no sign-in method besides your password.</p>{{/hasMethods}}
        <ul class="methods">
        {{#methods}}
        <li class="method">
        <p class="method-name">{{name}}{{#suspect}} <span class="badge">Blocked</span>{{/suspect}}</p>
        <p class="method-detail">{{kind}} · {{detail}}</p>
        <form method="post" action="{{methodAction}}" class="inline">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="id" value="{{id}}">
        {{#passkey}}<label for="name-{{id}}" class="sr-only">New name for {{name}}</label>
        <input id="name-{{id}}" name="displayName" type="text" maxlength="64" value="{{name}}">
        <button type="submit" name="action" value="rename" class="secondary">Rename</button>{{/passkey}}
        {{#canRemove}}<button type="submit" name="action" value="delete" class="secondary danger">Remove</button>{{/canRemove}}
        </form>
        </li>
        {{/methods}}
        </ul>
        <p class="alert" role="alert" id="passkey-error" hidden></p>
        {{#registration}}
        <form method="post" action="{{action}}" id="passkey-registration" data-challenge="{{challenge}}" data-rp-id="{{rpId}}" data-rp-name="{{rpName}}" data-user-id="{{userId}}" data-user-name="{{userName}}" data-user-display-name="{{userDisplayName}}" data-exclude="{{exclude}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="challenge" value="{{sealedChallenge}}">
        <label for="passkey-name">Name for a new passkey</label>
        <input id="passkey-name" name="displayName" type="text" maxlength="64" placeholder="Passkey">
        <noscript><p class="note">Adding a passkey needs JavaScript.</p></noscript>
        <div class="actions"><button type="button" data-passkey="register" hidden>Add a passkey</button></div>
        </form>
        {{/registration}}
        {{#addAuthenticator}}
        <form method="post" action="{{addAuthenticator}}" id="add-authenticator">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <div class="actions"><button type="submit" class="secondary">Add an authenticator app</button></div>
        </form>
        {{/addAuthenticator}}
        {{#blocked}}<p class="note" id="blocked">{{blocked}}</p>{{/blocked}}
        {{#verifyAction}}
        <form method="post" action="{{verifyAction}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <div class="actions"><button type="submit">Verify with your authenticator app</button></div>
        </form>
        {{/verifyAction}}
        <p class="note"><a href="{{signOut}}">Sign out</a></p>

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
        [hidden] { display: none !important; }
        h2 { font-size: 1.1rem; margin: 1.25rem 0 .5rem; }
        .terms { max-height: 18rem; overflow: auto; margin: 0; padding: .75rem .9rem; border: 1px solid var(--line); border-radius: .5rem;
                 background: #f6f8fa; white-space: pre-wrap; overflow-wrap: anywhere; font: .9rem/1.5 system-ui, sans-serif; }
        .notice { margin: 0 0 1rem; padding: .6rem .9rem; border-radius: .5rem; background: #e8f3ec; color: #1d5e34; border: 1px solid #a7d3b5; }
        .methods { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: .75rem; }
        .method { border: 1px solid var(--line); border-radius: .5rem; padding: .75rem; }
        .method p { margin: 0; }
        .method-name { font-weight: 600; }
        .method-detail { font-size: .875rem; color: var(--muted); }
        .badge { font-size: .75rem; padding: .1rem .4rem; border-radius: .25rem; background: var(--danger-bg); color: var(--danger); }
        form.inline { display: flex; gap: .5rem; margin-top: .5rem; flex-wrap: wrap; }
        form.inline input[type=text] { flex: 1 1 8rem; width: auto; padding: .45rem .6rem; }
        form.inline button { flex: 0 0 auto; min-height: 2.25rem; padding: .4rem .8rem; }
        button.danger { color: var(--danger); border-color: var(--danger); }
        .sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
        a { color: var(--accent); }
        .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
        @media (max-width: 30rem) { body { justify-content: flex-start; padding-top: 1rem; } .card { padding: 1.5rem 1.1rem; } }

        """
}
