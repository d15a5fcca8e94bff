package main

import (
	"embed"
	"html/template"
	"io"
	"path"
	"strings"
)

// The /templates page: the article's second test rendered MVC templates with a
// layout on both sides. Here both sides render this Page through a layout with a
// title and a list of items; TestApp's Razor view (testapp/dotnet/Views/Templates)
// carries the same data (TemplatePage.Menu in Payloads.cs) and the same markup.

//go:embed views
var viewFiles embed.FS

const (
	viewsDir     = "views"
	layoutView   = "shared/layout.html"
	templateView = "templates.html"
)

// Item is one line of the page's list.
type Item struct {
	ID    int
	Name  string
	Price float64
}

// Page is the model the /templates view renders.
type Page struct {
	Title   string
	Message string
	Items   []Item
}

// menu is the page's data, shared by every request (rendered each time).
var menu = &Page{
	Title:   "Menu",
	Message: "The menu of the day: 16 items from a data model, rendered through a layout.",
	Items: []Item{
		{1, "Espresso", 2.20},
		{2, "Cappuccino", 3.10},
		{3, "Flat white", 3.40},
		{4, "Green tea", 2.50},
		{5, "Hot chocolate", 3.00},
		{6, "Croissant", 2.75},
		{7, "Pain au chocolat", 2.95},
		{8, "Bagel & cream cheese", 4.50},
		{9, "Lemon tart", 5.25},
		{10, "Apple pie", 4.10},
		{11, "Cheesecake", 4.80},
		{12, "Fish & chips", 9.90},
		{13, "Soup of the day", 5.60},
		{14, "Caesar salad", 7.30},
		{15, "Club sandwich", 6.90},
		{16, "Sparkling water", 1.80},
	},
}

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
	if page, err = parse(templateView); err != nil {
		return nil, err
	}
	return &stdTemplates{layout: layout}, nil
}

func (t *stdTemplates) render(w io.Writer, p *Page) error {
	return t.layout.Execute(w, p)
}
