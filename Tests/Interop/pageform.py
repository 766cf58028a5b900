"""The first form of an HTML page, as a browser would submit it: shared by the interop tests that drive the sign-in page
with plain HTTP (msal_interop.py, dpop_interop.py)."""
import html.parser


class PageForm(html.parser.HTMLParser):
    """The first form of a page: its action and its inputs' values (as a browser would submit them)."""

    def __init__(self, text):
        super().__init__()
        self.action = None
        self.fields = {}
        self.in_form = False
        self.done = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and not self.done and self.action is None:
            self.action = attrs.get("action")
            self.in_form = True
        elif tag == "input" and self.in_form and attrs.get("name"):
            self.fields[attrs["name"]] = attrs.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form" and self.in_form:
            self.in_form = False
            self.done = True
