// Package docs is sluice's manual (the Markdown files beside this one) and
// the tests that keep it true: the configuration reference against the
// schema, the README's minimal configuration against the parser, and every
// relative link and anchor against the files and headings it points to.
package docs
