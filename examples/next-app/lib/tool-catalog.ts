import type { ToolDescriptor } from 'ai-toolbelt';

/**
 * The bundled MCP servers' tools (../hono-server/mcp-servers), as descriptors:
 * what `GET /api/select` ranks at the edge, where stdio MCP servers cannot run.
 * A snapshot: test/e2e/next-app.test.ts checks it against what the servers list.
 * With remote (Streamable HTTP) servers, an edge function could list them itself.
 */
export const toolCatalog: ToolDescriptor[] = [
  {
    server: 'weather',
    name: 'current_weather',
    description: 'Current weather conditions in a city: temperature, wind and sky',
  },
  {
    server: 'weather',
    name: 'forecast',
    description: 'Weather forecast for the coming days in a city: daily high, low and rain chance',
  },
  {
    server: 'weather',
    name: 'temperature_history',
    description:
      'Daily temperature readings (high and low, °C) measured in a city over the past days',
  },
  {
    server: 'weather',
    name: 'air_quality',
    description: 'Air quality index and main pollutant in a city',
  },
  {
    server: 'weather',
    name: 'sunrise_sunset',
    description: 'Sunrise and sunset times in a city today',
  },
  {
    server: 'calendar',
    name: 'list_events',
    description: 'List the calendar events (meetings, appointments) scheduled on a day',
  },
  {
    server: 'calendar',
    name: 'create_event',
    description: 'Add a meeting or appointment to the calendar',
  },
  {
    server: 'calendar',
    name: 'cancel_event',
    description: 'Cancel (delete) a calendar event by its id',
  },
  {
    server: 'calendar',
    name: 'find_free_slot',
    description:
      'Find the first free time slot of a given length on a day, between 08:00 and 18:00',
  },
  {
    server: 'calendar',
    name: 'public_holidays',
    description: 'Public holidays of a country in a year',
  },
];
