// A small MCP server (stdio) with an in-memory calendar, so the example works offline.
// Replace it with real servers in mcp.config.json.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

type CalendarEvent = { id: string; title: string; start: string; durationMinutes: number };

const server = new McpServer({ name: 'calendar', version: '1.0.0' });
const events: CalendarEvent[] = [
  { id: 'e1', title: 'Team stand-up', start: '2026-01-15T09:00', durationMinutes: 15 },
  { id: 'e2', title: 'Design review', start: '2026-01-15T13:00', durationMinutes: 60 },
];
let nextId = 3;
const date = z.string().describe('Day as YYYY-MM-DD');
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

server.registerTool(
  'list_events',
  {
    description: 'List the calendar events (meetings, appointments) scheduled on a day',
    inputSchema: { date },
  },
  ({ date }) => text(JSON.stringify(events.filter(event => event.start.startsWith(date)))),
);

server.registerTool(
  'create_event',
  {
    description: 'Add a meeting or appointment to the calendar',
    inputSchema: {
      title: z.string(),
      start: z.string().describe('Local start time as YYYY-MM-DDTHH:MM'),
      durationMinutes: z.number().int().min(5).max(480).default(30),
    },
  },
  ({ title, start, durationMinutes }) => {
    const event = { id: `e${nextId++}`, title, start, durationMinutes };
    events.push(event);
    return text(`Created ${JSON.stringify(event)}`);
  },
);

server.registerTool(
  'cancel_event',
  {
    description: 'Cancel (delete) a calendar event by its id',
    inputSchema: { id: z.string() },
  },
  ({ id }) => {
    const index = events.findIndex(event => event.id === id);
    // isError reaches the model as a tool error it can explain or correct.
    if (index === -1) return { ...text(`No event with id ${id}`), isError: true };
    events.splice(index, 1);
    return text(`Cancelled ${id}`);
  },
);

server.registerTool(
  'find_free_slot',
  {
    description:
      'Find the first free time slot of a given length on a day, between 08:00 and 18:00',
    inputSchema: { date, durationMinutes: z.number().int().min(5).max(480).default(30) },
  },
  ({ date, durationMinutes }) => {
    const busy = events
      .filter(event => event.start.startsWith(date))
      .map(event => [minutes(event.start), minutes(event.start) + event.durationMinutes] as const)
      .sort((a, b) => a[0] - b[0]);
    let start = 8 * 60;
    for (const [from, to] of busy) {
      if (from - start >= durationMinutes) break;
      start = Math.max(start, to);
    }
    return start + durationMinutes <= 18 * 60
      ? text(`${date}T${clock(start)}`)
      : text(`No free ${durationMinutes}-minute slot on ${date}`);
  },
);

server.registerTool(
  'public_holidays',
  {
    description: 'Public holidays of a country in a year',
    inputSchema: { country: z.string().describe('ISO country code, e.g. "NO"'), year: z.number() },
  },
  ({ country, year }) =>
    text(JSON.stringify([{ date: `${year}-01-01`, name: "New Year's Day", country }])),
);

await server.connect(new StdioServerTransport());

function minutes(localTime: string): number {
  const [hours = 0, mins = 0] = localTime.slice(11, 16).split(':').map(Number);
  return hours * 60 + mins;
}
function clock(total: number): string {
  return `${String(Math.floor(total / 60)).padStart(2, '0')}:${String(total % 60).padStart(2, '0')}`;
}
