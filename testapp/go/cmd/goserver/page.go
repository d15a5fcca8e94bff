package main

import (
	"embed"
	"html/template"
	"io"
	"path"
	"strings"
)

// The home page, the article's second test: its benchmark (kataras/iris _benchmarks,
// iris-mvc-templates and netcore-mvc-templates) served the ASP.NET Core MVC project
// template's home page at / on both sides, a static view inside a layout, about 7.2 kB.
// This page has that shape in words of our own: a layout with a navigation bar, a
// footer and three scripts around a view with a four-slide carousel and four columns
// of links. TestApp's Razor view (testapp/dotnet/Views/Templates) has the same markup,
// so both servers send the same bytes (tests/test_goservers.py).

//go:embed views
var viewFiles embed.FS

const (
	viewsDir   = "views"
	layoutView = "shared/layout.html"
	pageView   = "index.html"
)

// Page is what the layout reads: the title (the view itself is static, as the article's).
type Page struct {
	Title string
}

// home is the page's data, as the MVC template's ViewData["Title"] = "Home Page".
var home = &Page{Title: "Home Page"}

// stdTemplates parses the same view files with html/template alone (nethttp): the
// layout's {{ yield . }} renders the page template, as Iris' HTML engine does.
type stdTemplates struct {
	layout *template.Template
}

func newStdTemplates() (*stdTemplates, error) {
	var page *template.Template
	yield := func(data any) (template.HTML, error) {
		var b strings.Builder
		err := page.Execute(&b, data)
		return template.HTML(b.String()), err
	}
	root := template.New("").Funcs(template.FuncMap{"yield": yield})
	parse := func(name string) (*template.Template, error) {
		src, err := viewFiles.ReadFile(path.Join(viewsDir, name))
		if err != nil {
			return nil, err
		}
		return root.New(name).Parse(string(src))
	}
	layout, err := parse(layoutView)
	if err != nil {
		return nil, err
	}
	if page, err = parse(pageView); err != nil {
		return nil, err
	}
	return &stdTemplates{layout: layout}, nil
}

func (t *stdTemplates) render(w io.Writer, p *Page) error {
	return t.layout.Execute(w, p)
}
