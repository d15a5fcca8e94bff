using Microsoft.AspNetCore.Hosting;

namespace TestApp;

/// <summary>What TestApp and TestAppAot (testapp/aot, which compiles this file) do alike with
/// their command line before and while their host is built: one place, so the two apps take
/// and refuse the same arguments the same way.</summary>
public static class Startup
{
    /// <summary>The options argv gives, or null after one line on stderr naming what was wrong
    /// and the usage (the app then exits 2).</summary>
    public static AppOptions? ParseOrSay(string app, string[] args)
    {
        try
        {
            return AppOptions.Parse(args);
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine($"{app}: {e.Message}; {AppOptions.Usage}");
            return null;
        }
    }

    /// <summary>Kestrel's socket transport with the options' settings, where they set any.</summary>
    public static void UseSocketOptions(this IWebHostBuilder webHost, AppOptions options)
    {
        if (!options.HasSocketOptions)
        {
            return;
        }
        webHost.UseSockets(s =>
        {
            if (options.IoQueueCount is { } n) s.IOQueueCount = n;
            if (options.InlineScheduling is { } inline) s.UnsafePreferInlineScheduling = inline;
            if (options.WaitForData is { } wait) s.WaitForDataBeforeAllocatingBuffer = wait;
        });
    }
}
