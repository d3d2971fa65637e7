// A small MCP server (stdio) with made-up but stable weather data, so the example works offline.
// Replace it with real servers in mcp.config.json.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'weather', version: '1.0.0' });
const city = z.string().describe('City name, e.g. "Oslo"');
const json = (value: unknown) => ({
  content: [{ type: 'text' as const, text: JSON.stringify(value) }],
});

server.registerTool(
  'current_weather',
  {
    description: 'Current weather conditions in a city: temperature, wind and sky',
    inputSchema: { city },
  },
  ({ city }) => json({ city, temperatureC: round(baseTemperature(city)), sky: sky(city, 0) }),
);

server.registerTool(
  'forecast',
  {
    description: 'Weather forecast for the coming days in a city: daily high, low and rain chance',
    inputSchema: { city, days: z.number().int().min(1).max(10).default(3) },
  },
  ({ city, days }) =>
    json({
      city,
      days: Array.from({ length: days }, (_, i) => ({
        date: isoDate(i + 1),
        highC: round(baseTemperature(city) + wave(city, i + 1) + 3),
        lowC: round(baseTemperature(city) + wave(city, i + 1) - 4),
        rainChance: (hash(`${city}${i}`) % 90) / 100,
      })),
    }),
);

server.registerTool(
  'temperature_history',
  {
    description:
      'Daily temperature readings (high and low, °C) measured in a city over the past days',
    inputSchema: { city, days: z.number().int().min(1).max(31).default(7) },
  },
  ({ city, days }) =>
    json({
      city,
      unit: '°C',
      daily: Array.from({ length: days }, (_, i) => ({
        date: isoDate(i - days),
        highC: round(baseTemperature(city) + wave(city, i - days) + 3),
        lowC: round(baseTemperature(city) + wave(city, i - days) - 4),
      })),
    }),
);

server.registerTool(
  'air_quality',
  {
    description: 'Air quality index and main pollutant in a city',
    inputSchema: { city },
  },
  ({ city }) => json({ city, aqi: 20 + (hash(city) % 80), mainPollutant: 'pm2.5' }),
);

server.registerTool(
  'sunrise_sunset',
  {
    description: 'Sunrise and sunset times in a city today',
    inputSchema: { city },
  },
  ({ city }) => json({ city, sunrise: `0${6 + (hash(city) % 3)}:12`, sunset: '18:47' }),
);

await server.connect(new StdioServerTransport());

// Deterministic stand-ins for measurements: the same city always gets the same numbers.
function hash(text: string): number {
  let h = 2166136261;
  for (const char of text.toLowerCase()) h = Math.imul(h ^ char.charCodeAt(0), 16777619);
  return h >>> 0;
}
function baseTemperature(city: string): number {
  return 2 + (hash(city) % 20);
}
function wave(city: string, day: number): number {
  return Math.sin(day + (hash(city) % 7)) * 3;
}
function sky(city: string, day: number): string {
  return ['clear', 'cloudy', 'rain', 'snow showers'][hash(`${city}${day}`) % 4]!;
}
function round(value: number): number {
  return Math.round(value * 10) / 10;
}
function isoDate(offsetDays: number): string {
  return new Date(Date.UTC(2026, 0, 15) + offsetDays * 86_400_000).toISOString().slice(0, 10);
}
