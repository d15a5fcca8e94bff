package main

import (
	"context"
	"net"

	"github.com/kataras/iris/v12"
	"github.com/kataras/iris/v12/hero"
	"github.com/kataras/iris/v12/macro"
)

// newIrisApp is the part both Iris servers share: the Iris HTML view engine over the
// embedded views with the layout, the harness endpoints as plain handlers, and no
// logging (iris.New registers no request logger; the app logger is disabled).
func newIrisApp() *iris.Application {
	app := iris.New()
	app.RegisterView(iris.HTML(viewFiles, ".html").RootDir(viewsDir).Layout(layoutView))
	app.Get("/health", func(ctx iris.Context) {
		ctx.Text("ok")
	})
	app.Get("/__stats", func(ctx iris.Context) {
		ctx.ContentType("application/json")
		ctx.Write(statsJSON())
	})
	app.Post("/__stats/reset", func(ctx iris.Context) {
		resetCounts()
		ctx.ContentType("application/json")
		ctx.Write(statsJSON())
	})
	return app
}

// runIris: plain Iris handlers, ctx.View for the page.
func runIris(ctx context.Context, l net.Listener) error {
	app := newIrisApp()
	app.Get("/api/values/{id}", func(ctx iris.Context) {
		count(apiValues)
		ctx.Text("value")
	})
	app.Get("/", func(ctx iris.Context) {
		count(homePage)
		if err := ctx.View(pageView, home); err != nil {
			ctx.StopWithError(iris.StatusInternalServerError, err)
		}
	})
	return runIrisApp(ctx, app, l)
}

// runIrisMVC: controllers, as the article's Iris MVC apps. Iris' mvc package
// (mvc.New(party).Handle(controller)) binds each controller through the party's hero
// container as a hero.Struct and routes each action to Struct.MethodHandler; its
// controllers here have no fields, so they are singletons and that handler is the
// whole per-request path. The mvc package itself cannot be built offline (it imports
// iris/websocket, whose github.com/kataras/neffos and iris/versioning's
// github.com/blang/semver/v4 are not in the module mirror, see README.md), so the
// same binding is done here directly, on the paths mvc would derive from the
// method names (GetBy -> GET /{id}, Get -> GET /), as the article's HomeController
// served its page at the root.
func runIrisMVC(ctx context.Context, l net.Listener) error {
	app := newIrisApp()
	handleController(app.Party("/api/values"), new(ValuesController), "GetBy", "/{id}")
	handleController(app.Party("/"), new(HomeController), "Get", "/")
	return runIrisApp(ctx, app, l)
}

// handleController registers the controller's action method for GET party+relPath,
// the way mvc's ControllerActivator does for a controller without a BaseController.
func handleController(party iris.Party, controller any, method, relPath string) {
	partyParams := macro.CountParams(party.GetRelPath(), *party.Macros())
	injector := party.ConfigureContainer().Container.Clone().Struct(controller, partyParams)
	routeParams := macro.CountParams(party.GetRelPath()+relPath, *party.Macros())
	party.Get(relPath, injector.MethodHandler(method, routeParams))
}

// ValuesController is the article's ValuesController: GET /api/values/{id} -> "value".
type ValuesController struct{}

// GetBy handles GET /api/values/{id}; the id is not used (as in the article).
func (c *ValuesController) GetBy(id string) string {
	count(apiValues)
	return "value"
}

// HomeController renders the home page through the view engine and its layout.
type HomeController struct{}

// Get handles GET /.
func (c *HomeController) Get() hero.Result {
	count(homePage)
	return hero.View{Name: pageView, Data: home}
}

func runIrisApp(ctx context.Context, app *iris.Application, l net.Listener) error {
	run := func() error {
		return app.Run(iris.Listener(l),
			iris.WithoutStartupLog,
			iris.WithoutInterruptHandler, // SIGTERM/SIGINT are handled in main
			iris.WithLogLevel("disable"),
			iris.WithoutServerError(iris.ErrServerClosed),
		)
	}
	return serveUntilDone(ctx, run, app.Shutdown)
}
