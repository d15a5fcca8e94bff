using Microsoft.Extensions.Logging;

namespace TestApp;

/// <summary>The command line, parsed by hand before the host is built.</summary>
public sealed class AppOptions
{
    public const string Usage =
        "usage: TestApp [--urls URL[;URL...]] [--server kestrel|httpsys] [--io-queue-count N] "
        + "[--inline-scheduling true|false] [--wait-for-data true|false] "
        + "[--log-level Trace|Debug|Information|Warning|Error|Critical|None] [--mvc full|core|none] "
        + "[--api-test-body date|trace-id]";

    public string Urls { get; private set; } = "http://127.0.0.1:5000";
    public string Server { get; private set; } = "kestrel";
    public int? IoQueueCount { get; private set; }
    public bool? InlineScheduling { get; private set; }
    public bool? WaitForData { get; private set; }
    public LogLevel LogLevel { get; private set; } = LogLevel.Warning;

    /// <summary>MVC's services: "full" (AddControllersWithViews), "core" (AddMvcCore and only what the controllers
    /// need) or "none" (no MVC: GET /api/values/{id} is the minimal API, and the MVC endpoints are not there).</summary>
    public string Mvc { get; private set; } = "full";

    /// <summary>What GET api/test returns after "Test ": "date", DateTime.UtcNow (the 2021 article's
    /// first version), or "trace-id", Activity.Current?.Id ?? HttpContext.TraceIdentifier (its second).</summary>
    public string ApiTestBody { get; private set; } = "date";

    public bool HasSocketOptions => IoQueueCount is not null || InlineScheduling is not null || WaitForData is not null;

    /// <summary>Parses argv; `--key value` and `--key=value`. Throws UsageException on bad input.</summary>
    public static AppOptions Parse(string[] args)
    {
        var o = new AppOptions();
        for (var i = 0; i < args.Length; i++)
        {
            var arg = args[i];
            if (!arg.StartsWith("--", StringComparison.Ordinal) || arg.Length == 2)
            {
                throw new UsageException($"unexpected argument '{arg}'");
            }
            string key, value;
            var eq = arg.IndexOf('=');
            if (eq >= 0)
            {
                key = arg[2..eq];
                value = arg[(eq + 1)..];
            }
            else
            {
                key = arg[2..];
                if (!IsKnown(key))
                {
                    throw new UsageException($"unknown option '--{key}'");
                }
                if (i + 1 >= args.Length)
                {
                    throw new UsageException($"option '--{key}' needs a value");
                }
                value = args[++i];
            }
            o.Set(key, value);
        }
        if (o.Server == "httpsys" && o.HasSocketOptions)
        {
            throw new UsageException(
                "--io-queue-count, --inline-scheduling and --wait-for-data apply to --server kestrel only");
        }
        return o;
    }

    private static bool IsKnown(string key) => key is "urls" or "server" or "io-queue-count"
        or "inline-scheduling" or "wait-for-data" or "log-level" or "mvc" or "api-test-body";

    private void Set(string key, string value)
    {
        switch (key)
        {
            case "urls":
                var urls = value.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
                if (urls.Length == 0 || urls.Any(u => !IsUrl(u)))
                {
                    throw new UsageException($"bad --urls '{value}' (want http://HOST:PORT or http://unix:/PATH, ';'-separated)");
                }
                Urls = string.Join(';', urls);
                break;
            case "server":
                Server = OneOf(key, value, "kestrel", "httpsys");
                break;
            case "io-queue-count":
                if (!int.TryParse(value, out var n) || n < 0)
                {
                    throw new UsageException($"bad --io-queue-count '{value}' (want an integer >= 0)");
                }
                IoQueueCount = n;
                break;
            case "inline-scheduling":
                InlineScheduling = ParseBool(key, value);
                break;
            case "wait-for-data":
                WaitForData = ParseBool(key, value);
                break;
            case "log-level":
                if (!Enum.TryParse<LogLevel>(value, ignoreCase: true, out var level)
                    || !Enum.IsDefined(level) || int.TryParse(value, out _))
                {
                    throw new UsageException(
                        $"bad --log-level '{value}' (want Trace, Debug, Information, Warning, Error, Critical or None)");
                }
                LogLevel = level;
                break;
            case "mvc":
                Mvc = OneOf(key, value, "full", "core", "none");
                break;
            case "api-test-body":
                ApiTestBody = OneOf(key, value, "date", "trace-id");
                break;
            default:
                throw new UsageException($"unknown option '--{key}'");
        }
    }

    /// <summary>The value, in lower case, where it is one of <paramref name="allowed"/>.</summary>
    private static string OneOf(string key, string value, params string[] allowed)
    {
        var lower = value.ToLowerInvariant();
        return allowed.Contains(lower) ? lower : throw new UsageException(
            $"bad --{key} '{value}' (want {string.Join(", ", allowed[..^1])} or {allowed[^1]})");
    }

    private static bool IsUrl(string url)
    {
        var rest = url.StartsWith("http://", StringComparison.OrdinalIgnoreCase) ? url[7..]
            : url.StartsWith("https://", StringComparison.OrdinalIgnoreCase) ? url[8..]
            : null;
        if (string.IsNullOrEmpty(rest))
        {
            return false;
        }
        if (rest.StartsWith("unix:", StringComparison.OrdinalIgnoreCase))
        {
            return rest.Length > 5 && rest[5] == '/';
        }
        return true;
    }

    private static bool ParseBool(string key, string value) => value.ToLowerInvariant() switch
    {
        "true" => true,
        "false" => false,
        _ => throw new UsageException($"bad --{key} '{value}' (want true or false)"),
    };
}

public sealed class UsageException(string message) : Exception(message);
