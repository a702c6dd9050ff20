import { Card } from '@/components/ui/card';
import { Textarea } from '@/components/ui/textarea';

/** The system prompt every pane sends first. */
export function SystemPrompt({ value, onChange }: { value: string; onChange: (text: string) => void }) {
  return (
    <Card>
      <div className="flex flex-col gap-1.5 px-4 py-3">
        <label htmlFor="system-prompt" className="text-sm font-medium text-fg">
          System prompt
        </label>
        <Textarea
          id="system-prompt"
          rows={2}
          value={value}
          onChange={(event) => onChange(event.target.value)}
          placeholder="You are a helpful assistant."
          className="resize-y"
        />
      </div>
    </Card>
  );
}
