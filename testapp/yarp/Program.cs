// YarpProxy: Kestrel + YARP as a reverse proxy in front of the test app (the `yarp` hosting
// mode; see README.md). Everything it does comes from one JSON file the harness writes.
using System.Net;
using System.Reflection;
using Yarp.ReverseProxy.Configuration;

const string Usage = "usage: YarpProxy --config FILE.json | --version";

if (args is ["--version"])
{
    // The YARP build actually loaded, for the run's environment record.
    var yarp = typeof(IProxyConfig).Assembly;
    var version = yarp.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion
        ?? yarp.GetName().Version?.ToString() ?? "unknown";
    Console.WriteLine($"Yarp.ReverseProxy {version}");
    return 0;
}
if (args is not ["--config", var configPath])
{
    Console.Error.WriteLine($"YarpProxy: {Usage}");
    return 2;
}
if (!File.Exists(configPath))
{
    Console.Error.WriteLine($"YarpProxy: config file {configPath} not found; {Usage}");
    return 2;
}

var builder = WebApplication.CreateBuilder(new WebApplicationOptions
{
    Args = [],
    ContentRootPath = AppContext.BaseDirectory,
    EnvironmentName = Environments.Production,
});
// The file is the whole configuration: no appsettings.json, environment variables or command
// line can add a listener or a route. Read once: no file watcher.
builder.Configuration.Sources.Clear();
try
{
    builder.Configuration.AddJsonFile(Path.GetFullPath(configPath), optional: false, reloadOnChange: false);
}
catch (InvalidDataException e)
{
    var reason = e.GetBaseException().Message.ReplaceLineEndings(" ");
    Console.Error.WriteLine($"YarpProxy: {configPath} is not valid JSON: {reason}");
    return 2;
}

// Log levels come from the file's "Logging" section: Warning writes nothing per request;
// Microsoft.AspNetCore.Hosting.Diagnostics at Information is a request log (access_log).
builder.Logging.ClearProviders();
builder.Logging.AddSimpleConsole(c => c.SingleLine = true);
// A failed start is reported as one line below, not as a logged stack trace.
builder.Logging.AddFilter("Microsoft.Extensions.Hosting.Internal.Host", LogLevel.None);

// It never listens where anything beyond this machine could reach it: loopback, or the
// benchmarking range the harness's two-hosts namespaces use (hostbench/harness/netns.py).
var urls = builder.Configuration.GetSection("Kestrel:Endpoints").GetChildren()
    .Select(e => e["Url"] ?? "").ToList();
var elsewhere = urls.Where(u => !OnThisMachine(u)).ToList();
if (urls.Count == 0 || elsewhere.Count > 0)
{
    var found = urls.Count == 0 ? "none" : string.Join(", ", elsewhere);
    Console.Error.WriteLine(
        $"YarpProxy: {configPath}: Kestrel:Endpoints must give loopback URLs (http://127.0.0.1:PORT) "
        + $"or ones in 198.18.0.0/15 (two hosts on one machine); found {found}");
    return 2;
}

builder.Services.AddReverseProxy().LoadFromConfig(builder.Configuration.GetSection("ReverseProxy"));

// Disposed on the way out: that flushes the console log's last lines.
await using var app = builder.Build();
app.MapReverseProxy();

try
{
    await app.StartAsync();
}
catch (Exception e)
{
    Console.Error.WriteLine($"YarpProxy: cannot start: {e.GetType().Name}: {e.Message.ReplaceLineEndings(" ")}");
    return 1;
}
await app.WaitForShutdownAsync();
return 0;

static bool OnThisMachine(string url)
{
    if (!Uri.TryCreate(url, UriKind.Absolute, out var uri)) return false;
    if (uri.Host == "localhost") return true;
    if (!IPAddress.TryParse(uri.Host, out var ip)) return false;
    var bytes = ip.GetAddressBytes();
    var benchmarking = bytes.Length == 4 && bytes[0] == 198 && (bytes[1] & 0xFE) == 18; // RFC 2544
    return IPAddress.IsLoopback(ip) || benchmarking;
}
