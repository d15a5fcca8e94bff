// TestApp: the system under test of the hosting-model benchmark (see README.md).
using System.Net.Sockets;
using System.Text.Json;
using System.Text.RegularExpressions;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.HttpOverrides;
using TestApp;

if (Startup.ParseOrSay("TestApp", args) is not { } options)
{
    return 2;
}

if (options.Server == "httpsys" && !OperatingSystem.IsWindows())
{
    Console.Error.WriteLine("TestApp: --server httpsys is not available here: HTTP.sys runs only on Windows");
    return 4;
}

var builder = WebApplication.CreateBuilder(new WebApplicationOptions
{
    Args = [],
    ContentRootPath = AppContext.BaseDirectory,
});

builder.Logging.ClearProviders();
builder.Logging.AddSimpleConsole(c => c.SingleLine = true);
builder.Logging.SetMinimumLevel(options.LogLevel);
if (options.LogLevel == LogLevel.Information)
{
    // What the default template's appsettings.json does.
    builder.Logging.AddFilter("Microsoft.AspNetCore", LogLevel.Warning);
}
// A failed start is reported as one line below, not as a logged stack trace.
builder.Logging.AddFilter("Microsoft.Extensions.Hosting.Internal.Host", LogLevel.None);

// Under IIS (ASP.NET Core Module), IIS decides where the app listens: in-process it is the
// server, out-of-process UseIISIntegration points Kestrel at the port ANCM gives.
var underIis = Environment.GetEnvironmentVariable("ASPNETCORE_TOKEN") is not null
    || Environment.GetEnvironmentVariable("ASPNETCORE_IIS_PHYSICAL_PATH") is not null;
if (!underIis)
{
    builder.WebHost.UseUrls(options.Urls.Split(';'));
}
if (options.Server == "httpsys" && OperatingSystem.IsWindows())
{
    builder.WebHost.UseHttpSys();
}
else
{
    // Kestrel is the default server already (UseKestrel again would displace IIS in-process).
    builder.WebHost.UseSocketOptions(options);
}

if (options.Mvc == "core")
{
    // What the 2017 article's .NET app ended with after readers' advice (AddMvcCore instead of
    // AddMvc), plus what this app's controllers need: views (Razor, with temp data and view
    // data, for /html and the templates page at /) and the XML formatter. Left out compared with full:
    // ApiExplorer, authorization, CORS, data annotations, formatter mappings, the cache tag helper.
    builder.Services.AddMvcCore().AddRazorViewEngine().AddXmlSerializerFormatters();
}
else if (options.Mvc == "full")
{
    builder.Services.AddTestAppMvc(); // Mvc.cs: shared with the C# tour's in-memory host
}
builder.Services.AddSingleton(options); // what the controllers read of the command line (api/test's body)
builder.Services.Configure<ForwardedHeadersOptions>(f =>
{
    // Loopback is a known proxy by default (nginx, caddy on 127.0.0.1); over a Unix socket
    // there is no remote address and the headers are taken as they come.
    f.ForwardedHeaders = ForwardedHeaders.All;
});

var app = builder.Build();

app.UseForwardedHeaders();

// Counting, and the TechEmpower-style endpoints written as middleware (no routing, no MVC).
var plaintext = "Hello, World!"u8.ToArray();
app.Use((context, next) =>
{
    var id = RequestCounter.RouteId(context.Request.Path.Value);
    if (id == RequestCounter.None)
    {
        return next(context);
    }
    RequestCounter.Increment(id);
    switch (id)
    {
        case RequestCounter.Plaintext:
            return WriteAsync(context.Response, "text/plain", plaintext);
        case RequestCounter.HelloJson:
            return WriteAsync(context.Response, "application/json",
                JsonSerializer.SerializeToUtf8Bytes(new HelloMessage { Message = "Hello, World!" }, HelloMessage.JsonOptions));
        default:
            return next(context);
    }
});

// Harness endpoints: not counted.
app.MapGet("/health", () => Results.Text("ok", "text/plain"));
app.MapGet("/__stats", (HttpContext c) => WriteAsync(c.Response, "application/json", RequestCounter.SnapshotJson()));
app.MapPost("/__stats/reset", (HttpContext c) =>
{
    RequestCounter.Reset();
    return WriteAsync(c.Response, "application/json", RequestCounter.SnapshotJson());
});
// The socket-transport settings Kestrel runs with (Kestrel transports 2018): readable by a study.
app.MapGet("/__transport", (HttpContext c) =>
    WriteAsync(c.Response, "application/json", TransportInfo.Json(c.RequestServices, options.Server)));
app.MapGet("/__request-info", (HttpContext c) => Results.Json(new
{
    scheme = c.Request.Scheme,
    host = c.Request.Host.Value,
    remoteIp = c.Connection.RemoteIpAddress?.ToString(),
    path = c.Request.Path.Value,
    protocol = c.Request.Protocol,
}));

// Go vs .NET Core 2017's endpoint without MVC: a minimal API (counted as /api/values-minimal).
app.MapGet("/api/values-minimal/{id}", (int id) => "value");

if (options.Mvc == "none")
{
    // The same endpoint at the article's path, in an app without MVC: a contender that
    // shares the values scenario's load with the MVC apps (counted as /api/values).
    app.MapGet("/api/values/{id}", (int id) => "value");
}
else
{
    app.MapControllers();
}

RemoveStaleUnixSockets(options.Urls);
try
{
    await app.StartAsync();
}
catch (IOException e) when (e.InnerException is AddressInUseException || e.Message.Contains("address already in use"))
{
    Console.Error.WriteLine($"TestApp: {DescribeAddressInUse(e.Message, options.Urls)}");
    return 3;
}
catch (Exception e)
{
    Console.Error.WriteLine($"TestApp: cannot start: {e.GetType().Name}: {e.Message.ReplaceLineEndings(" ")}");
    return 1;
}
await app.WaitForShutdownAsync();
return 0;

static Task WriteAsync(HttpResponse response, string contentType, byte[] body)
{
    response.StatusCode = 200;
    response.ContentType = contentType;
    response.ContentLength = body.Length;
    return response.Body.WriteAsync(body, 0, body.Length);
}

// "Failed to bind to address http://127.0.0.1:5000: address already in use." -> names the port.
static string DescribeAddressInUse(string message, string urls)
{
    var m = Regex.Match(message, @"address (\S+?):? address already in use");
    var url = m.Success ? m.Groups[1].Value : urls;
    if (url.Contains("unix:", StringComparison.OrdinalIgnoreCase))
    {
        return $"cannot listen on {url}: the socket path is already in use";
    }
    var port = Regex.Match(url, @":(\d+)/?$");
    return port.Success
        ? $"cannot listen on {url}: port {port.Groups[1].Value} is already in use"
        : $"cannot listen on {url}: address already in use";
}

// A socket file left by a killed run makes Kestrel fail with "address already in use";
// remove it when nothing answers on it (a live server's socket is left alone).
static void RemoveStaleUnixSockets(string urls)
{
    foreach (var url in urls.Split(';'))
    {
        var i = url.IndexOf("unix:", StringComparison.OrdinalIgnoreCase);
        if (i < 0) continue;
        var path = url[(i + 5)..];
        if (!File.Exists(path)) continue;
        try
        {
            using var probe = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            probe.Connect(new UnixDomainSocketEndPoint(path));
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionRefused)
        {
            File.Delete(path);
        }
        catch (SocketException)
        {
        }
    }
}

/// <summary>The TechEmpower JSON scenario's message, serialized on every request.</summary>
internal sealed class HelloMessage
{
    public static readonly JsonSerializerOptions JsonOptions = new(JsonSerializerDefaults.Web);
    public string Message { get; set; } = "";
}
