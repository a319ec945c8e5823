import MarkdownIt from 'markdown-it';

/**
 * Markdown as issue descriptions and comments are written, rendered safely: raw HTML is
 * escaped (`html: false`), links are kept only for http, https and mailto addresses and
 * same-site paths, and every link leaves without the page's referrer or opener.
 */
const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
const SAFE_LINK = /^(https?:|mailto:|\/(?!\/)|#)/i;
md.validateLink = (url: string) => SAFE_LINK.test(url.trim());
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet('rel', 'nofollow noreferrer noopener');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

/** Longer texts are cut before rendering (the API bounds what is stored; this bounds the work). */
const MAX_SOURCE = 1_000_000;

export function Markdown({ source }: { source: string | null }) {
  if (!source) return <p class="muted">No description.</p>;
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: md.render(source.slice(0, MAX_SOURCE)) }} />;
}
