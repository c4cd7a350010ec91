// PEP 503 HTML pages, read with gumbo.

#include <gumbo.h>

#include <memory>

#include "index/page.hpp"
#include "index/page_parts.hpp"

namespace stackup::index {

using namespace detail;  // the pieces page_parts.hpp shares

namespace {

struct GumboDeleter {
    void operator()(GumboOutput* out) const { gumbo_destroy_output(&kGumboDefaultOptions, out); }
};
using GumboDocument = std::unique_ptr<GumboOutput, GumboDeleter>;

struct Anchor {
    std::string href;
    std::string text;
    const GumboElement* element = nullptr;
};

struct HtmlPage {
    std::vector<Anchor> anchors;
    std::optional<std::string> base_href;           // <base href>, when the page has one
    std::optional<std::string> repository_version;  // <meta name="pypi:repository-version">
};

std::optional<std::string> attribute(const GumboElement& e, const char* name) {
    const GumboAttribute* a = gumbo_get_attribute(&e.attributes, name);
    return a ? std::optional<std::string>(a->value) : std::nullopt;
}

// Calls `visit` on every node below `root` in document order; iterative, so deep garbage cannot
// overflow the stack.
template <typename Visit>
void for_each_node(const GumboNode* root, Visit visit) {
    std::vector<const GumboNode*> stack{root};
    while (!stack.empty()) {
        const GumboNode* node = stack.back();
        stack.pop_back();
        visit(*node);
        if (node->type == GUMBO_NODE_ELEMENT || node->type == GUMBO_NODE_TEMPLATE) {
            const GumboVector& children = node->v.element.children;
            for (unsigned i = children.length; i > 0; --i) {
                stack.push_back(static_cast<const GumboNode*>(children.data[i - 1]));
            }
        }
    }
}

std::string text_of(const GumboNode& node) {
    std::string text;
    for_each_node(&node, [&](const GumboNode& n) {
        if (n.type == GUMBO_NODE_TEXT || n.type == GUMBO_NODE_WHITESPACE || n.type == GUMBO_NODE_CDATA) {
            text += n.v.text.text;
        }
    });
    return std::string(trim(text));
}

void note_element(const GumboNode& node, HtmlPage& page) {
    const GumboElement& e = node.v.element;
    if (e.tag == GUMBO_TAG_A) {
        if (auto href = attribute(e, "href")) {
            page.anchors.push_back({*href, text_of(node), &e});
        }
    } else if (e.tag == GUMBO_TAG_BASE && !page.base_href) {
        page.base_href = attribute(e, "href");
    } else if (e.tag == GUMBO_TAG_META && attribute(e, "name") == "pypi:repository-version") {
        page.repository_version = attribute(e, "content");
    }
}

HtmlPage read_html(const GumboOutput& doc) {
    HtmlPage page;
    for_each_node(doc.root, [&](const GumboNode& node) {
        if (node.type == GUMBO_NODE_ELEMENT) {
            note_element(node, page);
        }
    });
    return page;
}

// PEP 714 renamed data-dist-info-metadata to data-core-metadata; the new name wins.
std::optional<std::string> html_metadata(const GumboElement& e) {
    auto value = attribute(e, "data-core-metadata");
    if (!value) {
        value = attribute(e, "data-dist-info-metadata");
    }
    if (!value) {
        return std::nullopt;
    }
    auto t = trim(*value);
    return t.empty() ? "true" : std::string(t);  // a bare attribute means "available, hash unknown"
}

std::optional<IndexFile> html_file(const Anchor& a, const base::Resolver& resolve) {
    auto absolute = resolve(a.href);
    if (!absolute) {
        return std::nullopt;
    }
    auto f = file_at(*absolute, a.text);
    if (!f) {
        return std::nullopt;
    }
    f->requires_python = empty_to_null(attribute(*a.element, "data-requires-python").value_or(""));  // gumbo decoded &gt;
    if (auto yanked = attribute(*a.element, "data-yanked")) {
        f->yanked = true;
        f->yanked_reason = std::string(trim(*yanked));
    }
    f->metadata = html_metadata(*a.element);
    return f;
}

std::optional<GumboDocument> parse_html(std::string_view text) {
    GumboDocument doc(gumbo_parse_with_options(&kGumboDefaultOptions, text.data(), text.size()));
    if (!doc || !doc->root) {
        return std::nullopt;
    }
    return doc;
}

}  // namespace

RootListing detail::parse_html_root(std::string_view text) {
    auto doc = parse_html(text);
    if (!doc) {
        return {{}, "the HTML parser gave up on this page"};
    }
    HtmlPage page = read_html(**doc);
    if (auto bad = check_api_version(page.repository_version.value_or(""))) {
        return {{}, *bad};
    }
    RootListing listing;
    for (const auto& a : page.anchors) {
        add_project(a.text, a.href, listing.projects);
    }
    return listing;
}

ParseResult parse_html_page(std::string_view text, std::string_view page_url) {
    if (auto bad = check_base(page_url)) {
        return failure(*bad);
    }
    auto doc = parse_html(text);
    if (!doc) {
        return failure("the HTML parser gave up on this page");
    }
    HtmlPage page = read_html(**doc);
    if (auto bad = check_api_version(page.repository_version.value_or(""))) {
        return failure(*bad);
    }
    std::string base(page_url);
    if (page.base_href) {
        if (auto based = base::resolve(page_url, *page.base_href)) {
            base = based->text;
        }
    }
    ParseResult result;
    const base::Resolver resolve(base);
    for (const auto& a : page.anchors) {
        if (auto f = html_file(a, resolve)) {
            result.files.push_back(std::move(*f));
        }
    }
    return result;
}

}  // namespace stackup::index
