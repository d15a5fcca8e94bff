namespace TestApp;

/// <summary>The app's MVC registration, in one place: Program.cs and <see cref="InMemoryApp"/> both call it.</summary>
public static class TestAppMvc
{
    /// <summary>Controllers, Razor views, and the XmlSerializer formatters (as the 2018 app).</summary>
    public static IMvcBuilder AddTestAppMvc(this IServiceCollection services) =>
        services.AddControllersWithViews().AddXmlSerializerFormatters();
}
